package webfetch

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/toolshed/toolshed/shared/netguard"
	"github.com/toolshed/toolshed/shared/toolerr"
	"golang.org/x/net/idna"
)

// maxHostLen is the longest DNS name.
const maxHostLen = 253

// checkURL checks a URL before anything is sent to it (the first URL and
// every redirect target) and returns it with its host in canonical ASCII
// form. It refuses other protocols, credentials, odd ports, hosts that are
// IP addresses (in any spelling) other than public ones, and domains the
// allowlist does not name. Names are checked again at connect time, on the
// address they resolve to.
func (f *Fetcher) checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, toolerr.Field("url", "is not a valid URL (%s)", parseProblem(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		scheme := u.Scheme
		if scheme == "" {
			scheme = "(none)"
		}
		return nil, toolerr.New(toolerr.InvalidInput, "Disallowed protocol").
			With("scheme", scheme).With("reason", "only http:// and https:// URLs can be fetched")
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, toolerr.Field("url", "has no host; write an absolute URL such as https://example.com/")
	}
	if u.User != nil {
		return nil, toolerr.Field("url", "must not contain a user name or password")
	}
	host, literal, err := canonicalHost(u)
	if err != nil {
		return nil, err
	}
	port, err := checkPort(u.Port())
	if err != nil {
		return nil, err
	}
	if !f.allowed.allows(host) {
		return nil, toolerr.New(toolerr.AccessDenied, "Disallowed domain").
			With("host", host).With("reason", "the domain is not on the allowlist (TOOLSHED_FETCH_ALLOWED_DOMAINS)")
	}
	if literal {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// canonicalHost returns the URL's host in lower-case ASCII, without a
// trailing dot, or an error if it is malformed or is an IP address that is
// not public. literal reports an IPv6 literal (to be bracketed again).
func canonicalHost(u *url.URL) (host string, literal bool, err error) {
	h := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is6() {
			return "", false, toolerr.Field("url", "has an invalid IPv6 address")
		}
		if a.Zone() != "" {
			return "", false, disallowedAddress(h, "an IPv6 zone names a local interface")
		}
		if c := netguard.Classify(a); c != netguard.Public {
			return "", false, disallowedAddress(h, string(c)+" address")
		}
		return a.String(), true, nil
	}
	h, err = asciiHost(h)
	if err != nil {
		return "", false, err
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if c := netguard.Classify(a); c != netguard.Public {
			return "", false, disallowedAddress(h, string(c)+" address")
		}
		return h, false, nil
	}
	a, isIPv4, err := netguard.ParseIPv4(h)
	switch {
	case !isIPv4:
		return h, false, nil
	case err != nil:
		return "", false, toolerr.Field("url", "has an invalid host %q: %v", h, err)
	}
	if c := netguard.Classify(a); c != netguard.Public {
		return "", false, disallowedAddress(h, string(c)+" address")
	}
	return "", false, toolerr.Field("url", "writes an IP address in an unusual form (%s); write it as %s", h, a)
}

// asciiHost maps a domain name to its lower-case ASCII form: IDNA
// (UTS #46, as browsers do) for non-ASCII names, one trailing dot dropped,
// and only letters, digits, '-' and '_' in labels of 1-63 bytes.
func asciiHost(h string) (string, error) {
	invalid := func() error { return toolerr.Field("url", "has an invalid host name %q", h) }
	ascii := h
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			a, err := idna.Lookup.ToASCII(h)
			if err != nil {
				return "", invalid()
			}
			ascii = a
			break
		}
	}
	ascii = strings.TrimSuffix(strings.ToLower(ascii), ".")
	if ascii == "" || len(ascii) > maxHostLen {
		return "", invalid()
	}
	for _, label := range strings.Split(ascii, ".") {
		if label == "" || len(label) > 63 {
			return "", invalid()
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "", invalid()
			}
		}
	}
	return ascii, nil
}

// Ports a fetch may use besides 80 and 443: the unprivileged range. The
// privileged ports below 1024 are other protocols (SSH, SMTP, ...) that an
// HTTP request must not be smuggled into.
const minUnprivilegedPort = 1024

// checkPort checks the URL's port, if it gives one, and returns it without
// leading zeros ("" when it gives none).
func checkPort(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 {
		return "", toolerr.Field("url", "has an invalid port %q (use 1-65535)", p)
	}
	if n != 80 && n != 443 && n < minUnprivilegedPort {
		return "", toolerr.New(toolerr.AccessDenied, "Disallowed port").
			With("port", n).With("reason", "only ports 80, 443 and 1024-65535 can be fetched")
	}
	return strconv.FormatUint(n, 10), nil
}

// disallowedAddress is the refusal of a host that is, or resolves to, an
// address that is not public; why says what kind of address.
func disallowedAddress(host, why string) *toolerr.Error {
	return toolerr.New(toolerr.AccessDenied, "Disallowed address: %s is not public (%s)", host, why).
		With("host", host).With("reason", "only public internet addresses can be fetched")
}

// parseProblem is url.Parse's complaint without the URL repeated.
func parseProblem(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

// allowlist is TOOLSHED_FETCH_ALLOWED_DOMAINS: exact host names, and
// "*.example.com" for every subdomain of example.com (not example.com
// itself). Empty allows every domain.
type allowlist struct {
	exact    map[string]bool
	suffixes []string // ".example.com"
}

func newAllowlist(entries []string) (allowlist, error) {
	a := allowlist{exact: map[string]bool{}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		wildcard := strings.HasPrefix(e, "*.")
		name := strings.TrimPrefix(e, "*.")
		if ip, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil && !wildcard {
			a.exact[ip.String()] = true
			continue
		}
		h, err := asciiHost(name)
		if err != nil || net.ParseIP(h) != nil {
			return allowlist{}, fmt.Errorf("%s: %q is not a host name or *.domain", AllowedDomains.Name(), e)
		}
		if wildcard {
			a.suffixes = append(a.suffixes, "."+h)
		} else {
			a.exact[h] = true
		}
	}
	return a, nil
}

func (a allowlist) allows(host string) bool {
	if len(a.exact) == 0 && len(a.suffixes) == 0 {
		return true
	}
	if a.exact[host] {
		return true
	}
	for _, s := range a.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}
