package webfetch_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/webfetch"
	"github.com/toolshed/toolshed/shared/wiring"
)

// fetchOK fetches a URL through the tool and returns the page.
func fetchOK(t *testing.T, h *tooltest.Harness, u string) webfetch.Page {
	t.Helper()
	var p webfetch.Page
	h.OK(t, "alice", webfetch.ToolName, args(u), &p)
	return p
}

// fetchFails fetches a URL through the tool and checks the refusal.
func fetchFails(t *testing.T, h *tooltest.Harness, u string, code toolerr.Code, msg string) {
	t.Helper()
	e := h.Fail(t, "alice", webfetch.ToolName, args(u), code)
	if e.Message != msg {
		t.Errorf("%s: got message %q, want %q", u, e.Message, msg)
	}
}

func TestFetchesPage(t *testing.T) {
	l := newLab(t)
	h := harness(t, l.fetcher(t, webfetch.Options{}))
	for _, base := range []string{l.site, l.secure} {
		got := fetchOK(t, h, base+"/page#fragment")
		want := webfetch.Page{
			OK: true, Status: 200, Content: "<p>hello from the lab</p>", ContentType: "text/html; charset=utf-8",
			Bytes: 25, FinalURL: base + "/page",
		}
		headers := got.Headers
		got.Headers = nil
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %+v\nwant %+v", base, got, want)
		}
		if headers["X-Twice"] != "a, b" || headers["Content-Type"] != want.ContentType {
			t.Errorf("%s: headers %v: want X-Twice joined as \"a, b\" and the Content-Type", base, headers)
		}
	}
}

// TestRequestHeaders: the fetch sends its own User-Agent and no cookies,
// credentials or proxy headers.
func TestRequestHeaders(t *testing.T) {
	l := newLab(t)
	h := harness(t, l.fetcher(t, webfetch.Options{}))
	got := fetchOK(t, h, l.site+"/echo").Content
	if !strings.Contains(got, "User-Agent: Toolshed-web-fetch/") {
		t.Errorf("request headers %q: want Toolshed's User-Agent", got)
	}
	for _, banned := range []string{"Cookie", "Authorization", "Proxy-"} {
		if strings.Contains(got, banned) {
			t.Errorf("request headers %q contain %s", got, banned)
		}
	}
}

func TestRedirects(t *testing.T) {
	l := newLab(t)
	h := harness(t, l.fetcher(t, webfetch.Options{}))
	for _, code := range []int{301, 302, 303, 307, 308} {
		got := fetchOK(t, h, fmt.Sprintf("%s/redirect?code=%d&to=%s", l.site, code, "/page"))
		if got.FinalURL != l.site+"/page" || got.Content != "<p>hello from the lab</p>" {
			t.Errorf("%d: got %+v, want the page at %s/page", code, got, l.site)
		}
	}
	got := fetchOK(t, h, fmt.Sprintf("%s/chain/%d", l.site, webfetch.MaxRedirects))
	if got.FinalURL != l.site+"/chain/0?to=" || got.Content != "end of the chain" {
		t.Errorf("5 redirects: got %+v, want the end of the chain", got)
	}
	// Across schemes and hosts, checked each time.
	got = fetchOK(t, h, l.site+"/redirect?to="+l.secure+"/page")
	if got.FinalURL != l.secure+"/page" {
		t.Errorf("redirect to https: final URL %s, want %s/page", got.FinalURL, l.secure)
	}
	fetchFails(t, h, fmt.Sprintf("%s/chain/%d", l.site, webfetch.MaxRedirects+1),
		toolerr.UpstreamError, "Network error: stopped after 5 redirects")
}

func TestSizeLimit(t *testing.T) {
	l := newLab(t)
	h := harness(t, l.fetcher(t, webfetch.Options{}))
	const limit = webfetch.MaxBodyBytes
	const refused = "Content size exceeds limit of 5 MB."
	for _, path := range []string{"/size/%d", "/size/%d?length=1", "/gzip/%d"} {
		got := fetchOK(t, h, l.site+fmt.Sprintf(path, limit))
		if got.Bytes != limit || len(got.Content) != limit {
			t.Errorf("%s: %d bytes (%d of content), want exactly %d", fmt.Sprintf(path, limit), got.Bytes, len(got.Content), limit)
		}
		fetchFails(t, h, l.site+fmt.Sprintf(path, limit+1), toolerr.SizeLimitExceeded, refused)
	}
}

// TestGzipBomb: a body that would inflate to 100 GiB stops at the limit,
// having read only a little of what the server offered.
func TestGzipBomb(t *testing.T) {
	l := newLab(t)
	h := harness(t, l.fetcher(t, webfetch.Options{}))
	fetchFails(t, h, l.site+"/bomb", toolerr.SizeLimitExceeded, "Content size exceeds limit of 5 MB.")
	// Each 1 MiB member compresses to about 1 KiB: 100 Ki members are about
	// 100 MiB. The server can only get so far ahead into socket buffers.
	t.Logf("compressed bytes sent: %d", l.bombWritten.Load())
	if sent := l.bombWritten.Load(); sent > 32<<20 {
		t.Errorf("the server sent %d compressed bytes; the fetch should stop reading at the limit", sent)
	}
}

// TestTimeout: a server that answers one byte at a time, or not at all,
// ends at the fetcher's timeout.
func TestTimeout(t *testing.T) {
	l := newLab(t)
	h := harness(t, l.fetcher(t, webfetch.Options{Timeout: 300 * time.Millisecond}))
	fetchFails(t, h, l.site+"/drip", toolerr.UpstreamError, "Network error: timed out after 300ms")
	fetchFails(t, h, l.site+"/stall", toolerr.UpstreamError, "Network error: timed out after 300ms")
}

func TestContentTypes(t *testing.T) {
	l := newLab(t)
	h := harness(t, l.fetcher(t, webfetch.Options{}))
	refused := map[string]string{
		"image/png":                "image/png",
		"IMAGE/PNG; charset=x":     "image/png",
		"application/octet-stream": "application/octet-stream",
		"video/mp4":                "video/mp4",
		"audio/mpeg":               "audio/mpeg",
		"font/woff2":               "font/woff2",
		"application/zip":          "application/zip",
		"application/gzip":         "application/gzip",
		"application/x-tar":        "application/x-tar",
		"none":                     "image/png", // no Content-Type: sniffed from the body
	}
	for ct, mediaType := range refused {
		fetchFails(t, h, l.site+"/typed?ct="+url.QueryEscape(ct), toolerr.AccessDenied, "Disallowed content type: "+mediaType)
	}
	for _, ct := range []string{"text/plain", "application/json", "text/html; charset=utf-8", "application/xml", "text/csv"} {
		if got := fetchOK(t, h, l.site+"/typed?ct="+url.QueryEscape(ct)); got.ContentType != ct || got.Content != "data" {
			t.Errorf("%s: got %+v", ct, got)
		}
	}

	// A configured list replaces the defaults.
	h = harness(t, l.fetcher(t, webfetch.Options{RejectTypes: []string{"text/csv", "application/*"}}))
	fetchFails(t, h, l.site+"/typed?ct=text/csv", toolerr.AccessDenied, "Disallowed content type: text/csv")
	fetchFails(t, h, l.site+"/typed?ct=application/json", toolerr.AccessDenied, "Disallowed content type: application/json")
	fetchOK(t, h, l.site+"/typed?ct=image/png")
}

// TestEncodings: text is decoded to UTF-8 from the declared charset, a BOM,
// an HTML meta declaration or a guess; content encodings other than gzip
// are refused.
func TestEncodings(t *testing.T) {
	l := newLab(t)
	h := harness(t, l.fetcher(t, webfetch.Options{}))
	tests := []struct {
		ct, body string
		want     string
	}{
		{"text/plain; charset=iso-8859-1", "caf\xe9", "café"},
		{"text/plain; charset=shift_jis", "\x93\xfa\x96\x7b", "日本"},
		{"text/html", "<meta charset=\"windows-1252\"><p>\x93hi\x94</p>", "<meta charset=\"windows-1252\"><p>“hi”</p>"},
		{"text/plain", "\xff\xfeh\x00i\x00", "hi"}, // UTF-16LE with a BOM
		{"text/plain; charset=utf-8", "a\xffb", "a\ufffdb"},
		{"application/json", `{"k":"ü"}`, `{"k":"ü"}`},
		{"text/plain", "na\xefve", "naïve"},                                     // not UTF-8, no declaration: windows-1252
		{"application/json&pad=2000", `"é"`, strings.Repeat("x", 2000) + `"é"`}, // UTF-8 after the first 1024 bytes
		{"text/html", "<meta charset=\"windows-1252\"><p>plain</p>", "<meta charset=\"windows-1252\"><p>plain</p>"},
		{"text/plain", "\xef\xbb\xbfbom", "bom"}, // UTF-8 with a BOM
	}
	for _, tc := range tests {
		ct, pad, _ := strings.Cut(tc.ct, "&")
		got := fetchOK(t, h, l.site+"/typed?ct="+url.QueryEscape(ct)+"&body="+url.QueryEscape(tc.body)+"&"+pad)
		if got.Content != tc.want {
			t.Errorf("%s %q: got %.80q, want %.80q", tc.ct, tc.body, got.Content, tc.want)
		}
	}
	fetchFails(t, h, l.site+"/typed?ct=text/plain&encoding=br", toolerr.UpstreamError, `Network error: unsupported content encoding "br"`)
}

func TestUpstreamErrors(t *testing.T) {
	l := newLab(t)
	h := harness(t, l.fetcher(t, webfetch.Options{}))
	for _, code := range []int{404, 500, 204} {
		u := fmt.Sprintf("%s/status/%d", l.site, code)
		if code == 204 {
			if got := fetchOK(t, h, u); got.Status != 204 || got.Bytes != 0 {
				t.Errorf("204: got %+v", got)
			}
			continue
		}
		fetchFails(t, h, u, toolerr.UpstreamError, fmt.Sprintf("Request failed with status code: %d", code))
	}
	fetchFails(t, h, "http://nowhere.test/", toolerr.UpstreamError, "Network error: cannot resolve nowhere.test (no such host)")

	// An allowed address where nothing listens any more.
	closed := httptest.NewServer(nil)
	gone := addrPort(closed)
	closed.Close()
	l.dns.set("closed.test", "127.0.0.1")
	h = harness(t, l.fetcher(t, webfetch.Options{AllowAddrs: []netip.AddrPort{gone}}))
	fetchFails(t, h, "http://closed.test:"+port(closed)+"/", toolerr.UpstreamError, "Network error: connection refused")

	// A fetcher that trusts no test certificate refuses the TLS server.
	untrusting, err := webfetch.New(webfetch.Options{Resolver: l.dns.resolver(), AllowAddrs: []netip.AddrPort{addrPort(l.tls)}})
	if err != nil {
		t.Fatal(err)
	}
	e := harness(t, untrusting).Fail(t, "alice", webfetch.ToolName, args(l.secure+"/page"), toolerr.UpstreamError)
	if !strings.HasPrefix(e.Message, "Network error: TLS certificate not accepted") {
		t.Errorf("untrusted certificate: got %q", e.Message)
	}
}

// TestRebinding: a name that resolved to an allowed address once and to a
// loopback address next gets no connection the second time. (The test's
// server is the "public" address; 127.0.0.2 on the same port is the
// target, watched by a trap.)
func TestRebinding(t *testing.T) {
	l := newLab(t)
	target := startTrap(t, "127.0.0.2:"+port(l.plain))
	l.dns.set("rebind.test", "127.0.0.1")
	l.dns.set("rebind.test", "127.0.0.2")
	u := "http://rebind.test:" + port(l.plain) + "/page"
	fetchOK(t, harness(t, l.fetcher(t, webfetch.Options{})), u)
	// A new fetcher, so no kept-alive connection is reused.
	fetchFails(t, harness(t, l.fetcher(t, webfetch.Options{})), u, toolerr.AccessDenied,
		"Disallowed address: rebind.test is not public (resolves to a loopback address)")
	if n := target.count.Load(); n != 0 {
		t.Errorf("the rebinding target got %d connections", n)
	}
}

// TestProxyEnvironmentIgnored: proxy variables cannot route fetches
// anywhere (a proxy would also do its own, unchecked, resolution).
func TestProxyEnvironmentIgnored(t *testing.T) {
	l := newLab(t)
	proxy := "http://127.0.0.1:" + l.trapPort()
	for _, v := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"} {
		t.Setenv(v, proxy)
	}
	t.Setenv("NO_PROXY", "")
	h := harness(t, l.fetcher(t, webfetch.Options{}))
	fetchOK(t, h, l.site+"/page")
	fetchOK(t, h, l.secure+"/page")
	if n := l.trap.count.Load(); n != 0 {
		t.Errorf("the proxy got %d connections", n)
	}
}

func TestAllowlist(t *testing.T) {
	l := newLab(t)
	l.dns.set("other.test", "127.0.0.1")
	l.dns.set("a.example.com", "127.0.0.1")
	l.dns.set("b.a.example.com", "127.0.0.1")
	l.dns.set("badexample.com", "127.0.0.1")
	h := harness(t, l.fetcher(t, webfetch.Options{AllowedDomains: []string{"site.test", "*.example.com", "BÜCHER.test"}}))
	p := ":" + port(l.plain)
	fetchOK(t, h, l.site+"/page")
	fetchOK(t, h, "http://SITE.test."+p+"/page")
	fetchOK(t, h, "http://a.example.com"+p+"/page")
	fetchOK(t, h, "http://b.a.example.com"+p+"/page")
	for _, u := range []string{
		"http://other.test" + p + "/page",
		"http://badexample.com" + p + "/page",
		"https://example.com:" + port(l.tls) + "/page", // *.example.com is its subdomains only
		"http://site.test.evil.test" + p + "/",
		l.site + "/redirect?to=" + url.QueryEscape("http://other.test"+p+"/page"),
	} {
		fetchFails(t, h, u, toolerr.AccessDenied, "Disallowed domain")
	}
	for _, bad := range [][]string{{"*"}, {"*.*.example.com"}, {"exa mple.com"}, {"*.10.0.0.1"}, {"http://example.com"}} {
		if _, err := webfetch.New(webfetch.Options{AllowedDomains: bad}); err == nil {
			t.Errorf("allowlist %q: want an error", bad)
		}
	}
	if _, err := webfetch.New(webfetch.Options{RejectTypes: []string{"image"}}); err == nil {
		t.Error(`reject type "image": want an error`)
	}
}

// TestDefaultConfigRefusesLoopback: web-fetch as the server builds it (the
// family's constructor, the system resolver, no test switch) refuses the
// test's own loopback server, which sees no request.
func TestDefaultConfigRefusesLoopback(t *testing.T) {
	l := newLab(t)
	tools, err := webfetch.Family.New(context.Background(), wiring.NewEnv(config.Config{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	h := harnessFor(t, tools)
	p := port(l.plain)
	fetchFails(t, h, "http://127.0.0.1:"+p+"/page", toolerr.AccessDenied,
		"Disallowed address: 127.0.0.1 is not public (loopback address)")
	fetchFails(t, h, "http://localhost:"+p+"/page", toolerr.AccessDenied,
		"Disallowed address: localhost is not public (resolves to a loopback address)")
	if n := l.requests.Load(); n != 0 {
		t.Errorf("the loopback server answered %d requests", n)
	}
}
