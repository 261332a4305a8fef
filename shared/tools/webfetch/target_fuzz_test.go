package webfetch

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/netguard"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// FuzzCheckURL: whatever the URL, checkURL either refuses it in the
// vocabulary or returns an http(s) URL without credentials whose host is a
// domain or a public IP address, on an allowed port, which checks again to
// itself. With an allowlist, only listed hosts pass.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com", "http://example.com:8080/a?b=c#d", "HTTP://EXAMPLE.COM./",
		"https://www.example.org/x", "http://a.b.example.org:443/", "https://bücher.example.org/",
		"http://8.8.8.8/", "http://[2606:4700:4700::1111]/", "http://134744072/",
		"http://127.0.0.1/", "http://2130706433/", "http://0x7f.1/", "http://0177.0.0.1/",
		"http://[::ffff:127.0.0.1]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[2002:7f00:1::]/",
		"http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://[fe80::1%25lo]/",
		"http://①②⑦.⓪.⓪.①/", "http://１２７.０.０.１/", "http://user:pw@example.com/",
		"http://example.com@127.0.0.1/", "ftp://example.com/", "javascript:alert(1)", "//example.com/",
		"http://example.com:22/", "http://example.com:0/", "http://256.1.1.1/", "http://foo.0x1f/",
		"http://a..b/", "http:///x", "http://[::1/", "http://exa!mple.com/", "http://%31%32%37.0.0.1/",
	} {
		f.Add(s)
	}
	open, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	listed, err := New(Options{AllowedDomains: []string{"example.com", "*.example.org"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, fetcher := range []*Fetcher{open, listed} {
			u, err := fetcher.checkURL(raw)
			if err != nil {
				var te *toolerr.Error
				if !errors.As(err, &te) || te.Code == toolerr.Internal {
					t.Fatalf("%q: refusal %v is not in the vocabulary", raw, err)
				}
				continue
			}
			if u.Scheme != "http" && u.Scheme != "https" || u.User != nil {
				t.Fatalf("%q: accepted as %s", raw, u)
			}
			host := u.Hostname()
			if host == "" || host != strings.ToLower(host) || strings.HasSuffix(host, ".") {
				t.Fatalf("%q: host %q is not canonical", raw, host)
			}
			if a, err := netip.ParseAddr(host); err == nil {
				if c := netguard.Classify(a); c != netguard.Public {
					t.Fatalf("%q: accepted the %s address %s", raw, c, a)
				}
			} else if _, isIPv4, _ := netguard.ParseIPv4(host); isIPv4 {
				t.Fatalf("%q: accepted the numeric host %q", raw, host)
			}
			if p := u.Port(); p != "" && p != "80" && p != "443" && len(p) < 4 {
				t.Fatalf("%q: accepted port %s", raw, p)
			}
			if fetcher == listed && host != "example.com" && !strings.HasSuffix(host, ".example.org") {
				t.Fatalf("%q: host %q is not on the allowlist", raw, host)
			}
			again, err := fetcher.checkURL(u.String())
			if err != nil || again.String() != u.String() {
				t.Fatalf("%q: accepted as %s, which checks to %v, %v", raw, u, again, err)
			}
		}
	})
}
