package webfetch_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/webfetch"
)

// hostile is a URL the fetcher must refuse, with the code and the start of
// the message it must refuse it with.
type hostile struct {
	url  string
	code toolerr.Code
	msg  string
}

// Refusals, as the caller sees them.
const (
	protocol    = "Disallowed protocol"
	address     = "Disallowed address: "
	domain      = "Disallowed domain"
	portRefused = "Disallowed port"
	credentials = "url: must not contain a user name or password"
	invalidURL  = "url: "
)

// lookups are the names the lab's DNS resolves to addresses no fetch may
// reach.
var lookups = map[string][]string{
	"loopback.test":            {"127.0.0.1"},
	"loopback6.test":           {"::1"},
	"both.test":                {"127.0.0.1", "::1"},
	"metadata.test":            {"169.254.169.254"},
	"metadata6.test":           {"fd00:ec2::254"},
	"169.254.169.254.nip.test": {"169.254.169.254"},
	"private.test":             {"10.1.2.3"},
	"private6.test":            {"fc00::5"},
	"cgnat.test":               {"100.64.1.1"},
	"mapped.test":              {"::ffff:127.0.0.1"},
	"own.test":                 {"192.0.2.2"}, // this machine's own address (TEST-NET-1)
	"own6.test":                {"fd00::2"},   // and its unique local one
	"unspecified.test":         {"0.0.0.0"},
	"unspecified6.test":        {"::"},
	"nat64.test":               {"64:ff9b::7f00:1"},
	"sixtofour.test":           {"2002:a9fe:a9fe::1"},
	"multicast.test":           {"224.0.0.251"},
	"broadcast.test":           {"255.255.255.255"},
	"linklocal6.test":          {"fe80::1"},
	"xn--bcher-kva.test":       {"127.0.0.1"}, // bücher.test
	"mixed.test":               {"10.0.0.1", "127.0.0.1", "fd00::1"},
}

// hostileURLs are at least 80 URLs, every one to be refused: each address
// class in its usual and unusual spellings, names that resolve to such
// addresses, redirects that end at them, credentials, other protocols,
// IDNA tricks and odd ports. T is the trap's port, so anything that got
// through to a local address would be counted.
func hostileURLs(l *lab) []hostile {
	T := l.trapPort()
	via := func(target string) string { return l.site + "/redirect?to=" + url.QueryEscape(target) }
	chain := func(n int, target string) string {
		return fmt.Sprintf("%s/chain/%d?to=%s", l.site, n, url.QueryEscape(target))
	}
	denied := toolerr.AccessDenied
	invalid := toolerr.InvalidInput
	return []hostile{
		// Other protocols.
		{"ftp://example.com/file.txt", invalid, protocol},
		{"file:///etc/passwd", invalid, protocol},
		{"gopher://127.0.0.1:" + T + "/_INFO", invalid, protocol},
		{"dict://127.0.0.1:" + T + "/info", invalid, protocol},
		{"javascript:alert(1)", invalid, protocol},
		{"data:text/plain,hello", invalid, protocol},
		{"ws://example.com/socket", invalid, protocol},
		{"jar:http://example.com/a.jar!/", invalid, protocol},
		{"//127.0.0.1:" + T + "/", invalid, protocol},
		{"example.com", invalid, protocol},
		{"/etc/passwd", invalid, protocol},
		// Credentials.
		{"http://user:secret@example.com/", invalid, credentials},
		{"http://user@127.0.0.1:" + T + "/", invalid, credentials},
		{"https://@example.com/", invalid, credentials},
		{"http://example.com@127.0.0.1:" + T + "/", invalid, credentials},
		{"http://example.com:80@127.0.0.1:" + T + "/", invalid, credentials},
		// Loopback, every spelling.
		{"http://127.0.0.1:" + T + "/", denied, address + "127.0.0.1 is not public (loopback address)"},
		{"HTTP://127.0.0.1:" + T + "/", denied, address},
		{"http://127.0.0.2:" + T + "/", denied, address},
		{"http://127.255.255.254:" + T + "/", denied, address},
		{"http://[::1]:" + T + "/", denied, address + "::1 is not public (loopback address)"},
		{"http://[0:0:0:0:0:0:0:1]:" + T + "/", denied, address},
		{"http://2130706433:" + T + "/", denied, address + "2130706433 is not public (loopback address)"},
		{"http://0x7f000001:" + T + "/", denied, address},
		{"http://017700000001:" + T + "/", denied, address},
		{"http://0177.0.0.1:" + T + "/", denied, address},
		{"http://0x7f.0.0.1:" + T + "/", denied, address},
		{"http://0x7F.1:" + T + "/", denied, address},
		{"http://127.1:" + T + "/", denied, address},
		{"http://127.0.1:" + T + "/", denied, address},
		{"http://127.0.0.1.:" + T + "/", denied, address},
		{"http://0x7f.0x00.0x00.0x01:" + T + "/", denied, address},
		{"http://00000177.0.0.1:" + T + "/", denied, address},
		{"http://%31%32%37.0.0.1:" + T + "/", invalid, invalidURL},
		{"http://①②⑦.⓪.⓪.①:" + T + "/", denied, address},
		{"http://１２７.０.０.１:" + T + "/", denied, address},
		// Unspecified (Linux connects it to the local host).
		{"http://0.0.0.0:" + T + "/", denied, address},
		{"http://0:" + T + "/", denied, address},
		{"http://[::]:" + T + "/", denied, address},
		// IPv6 forms that embed IPv4.
		{"http://[::ffff:127.0.0.1]:" + T + "/", denied, address},
		{"http://[::ffff:7f00:1]:" + T + "/", denied, address},
		{"http://[0:0:0:0:0:ffff:127.0.0.1]:" + T + "/", denied, address},
		{"http://[::ffff:169.254.169.254]/", denied, address},
		{"http://[::ffff:8.8.8.8]/", denied, address + "::ffff:8.8.8.8 is not public (IPv4-mapped address)"},
		{"http://[::127.0.0.1]:" + T + "/", denied, address},
		{"http://[::a9fe:a9fe]/", denied, address},
		{"http://[2002:7f00:1::]/", denied, address + "2002:7f00:1:: is not public (6to4 form of loopback address)"},
		{"http://[2002:a9fe:a9fe::1]/", denied, address},
		{"http://[64:ff9b::127.0.0.1]/", denied, address},
		{"http://[64:ff9b::a9fe:a9fe]/", denied, address + "64:ff9b::a9fe:a9fe is not public (NAT64 form of link-local address)"},
		{"http://[64:ff9b:1::1]/", denied, address},
		// Cloud metadata and link-local.
		{"http://169.254.169.254/latest/meta-data/", denied, address + "169.254.169.254 is not public (link-local address)"},
		{"http://0xa9fea9fe/latest/meta-data/", denied, address},
		{"http://2852039166/latest/meta-data/", denied, address},
		{"http://0251.0376.0251.0376/", denied, address},
		{"http://169.254.170.2/v2/credentials", denied, address},
		{"http://[fd00:ec2::254]/latest/meta-data/", denied, address + "fd00:ec2::254 is not public (private address)"},
		{"http://[fe80::1]/", denied, address},
		{"http://[fe80::1%25lo]/", denied, address + "fe80::1%lo is not public (an IPv6 zone names a local interface)"},
		// Private networks and CGNAT.
		{"http://10.0.0.1/", denied, address},
		{"http://172.16.0.1/", denied, address},
		{"http://172.31.255.255/", denied, address},
		{"http://192.168.1.1/admin", denied, address},
		{"http://[fc00::1]/", denied, address},
		{"http://[fd00::2]:" + T + "/", denied, address},
		{"http://100.64.0.1/", denied, address + "100.64.0.1 is not public (shared (CGNAT) address)"},
		{"http://100.127.255.254/", denied, address},
		// Multicast, broadcast, documentation, reserved.
		{"http://224.0.0.1/", denied, address},
		{"http://[ff02::1]/", denied, address},
		{"http://255.255.255.255/", denied, address + "255.255.255.255 is not public (broadcast address)"},
		{"http://192.0.2.2:" + T + "/", denied, address + "192.0.2.2 is not public (documentation address)"},
		{"http://198.51.100.7/", denied, address},
		{"http://203.0.113.9/", denied, address},
		{"http://[2001:db8::1]/", denied, address},
		{"http://240.0.0.1/", denied, address},
		{"http://198.18.0.1/", denied, address},
		{"http://192.0.0.8/", denied, address},
		{"http://[100::1]/", denied, address},
		{"http://[2001::1]/", denied, address},
		// Names that resolve to such addresses (checked when connecting).
		{"http://localhost:" + T + "/", denied, address + "localhost is not public (resolves to a loopback address)"},
		{"http://LOCALHOST:" + T + "/", denied, address},
		{"http://localhost.:" + T + "/", denied, address},
		{"http://loopback.test:" + T + "/", denied, address + "loopback.test is not public (resolves to a loopback address)"},
		{"http://loopback6.test:" + T + "/", denied, address},
		{"http://both.test:" + T + "/", denied, address},
		{"http://metadata.test/latest/meta-data/", denied, address + "metadata.test is not public (resolves to a link-local address)"},
		{"http://metadata6.test/latest/meta-data/", denied, address},
		{"http://169.254.169.254.nip.test/", denied, address},
		{"http://private.test/", denied, address},
		{"http://private6.test/", denied, address},
		{"http://cgnat.test/", denied, address},
		{"http://mapped.test:" + T + "/", denied, address},
		{"http://own.test:" + T + "/", denied, address},
		{"http://own6.test:" + T + "/", denied, address},
		{"http://unspecified.test:" + T + "/", denied, address},
		{"http://unspecified6.test:" + T + "/", denied, address},
		{"http://nat64.test:" + T + "/", denied, address},
		{"http://sixtofour.test/", denied, address},
		{"http://multicast.test/", denied, address},
		{"http://broadcast.test/", denied, address},
		{"http://linklocal6.test/", denied, address},
		{"http://mixed.test:" + T + "/", denied, address},
		{"http://bücher.test:" + T + "/", denied, address + "xn--bcher-kva.test is not public"},
		{"http://BÜCHER.test:" + T + "/", denied, address},
		// Redirects to such places, after a public-looking first hop.
		{via("http://169.254.169.254/latest/meta-data/iam/security-credentials/"), denied, address + "169.254.169.254"},
		{via("http://[fd00:ec2::254]/latest/meta-data/"), denied, address},
		{via("http://127.0.0.1:" + T + "/"), denied, address},
		{via("//127.0.0.1:" + T + "/"), denied, address},
		{via("http://localhost:" + T + "/"), denied, address + "localhost"},
		{via("http://metadata.test/latest/meta-data/"), denied, address + "metadata.test"},
		{via("http://[::ffff:127.0.0.1]:" + T + "/"), denied, address},
		{via("http://2130706433:" + T + "/"), denied, address},
		{via("http://0x7f.1:" + T + "/"), denied, address},
		{via("ftp://example.com/"), invalid, protocol},
		{via("file:///etc/passwd"), invalid, protocol},
		{via("http://admin:admin@example.com/"), invalid, credentials},
		{via("http://example.com:22/"), denied, portRefused},
		{via("http://169.254.169.254/") + "&code=301", denied, address},
		{via("http://169.254.169.254/") + "&code=303", denied, address},
		{via("http://169.254.169.254/") + "&code=307", denied, address},
		{via("http://169.254.169.254/") + "&code=308", denied, address},
		{chain(3, "http://169.254.169.254/latest/meta-data/"), denied, address + "169.254.169.254"},
		{chain(4, "http://metadata.test/latest/meta-data/"), denied, address + "metadata.test"},
		{chain(2, via("http://[::1]:"+T+"/")), denied, address},
		// Odd ports and malformed hosts.
		{"http://example.com:22/", denied, portRefused},
		{"http://example.com:25/", denied, portRefused},
		{"https://example.com:1023/", denied, portRefused},
		{"http://example.com:0/", invalid, invalidURL},
		{"http://example.com:65536/", invalid, invalidURL},
		{"http://example.com:99999999999999999999/", invalid, invalidURL},
		{"http://example.com:-1/", invalid, invalidURL},
		{"http://example.com:8o/", invalid, invalidURL},
		{"http://127.0.0.1:0080/", denied, address},
		{"http://256.0.0.1/", invalid, invalidURL},
		{"http://1.2.3.4.5/", invalid, invalidURL},
		{"http://0x100000000/", invalid, invalidURL},
		{"http://foo.0x1f/", invalid, invalidURL},
		{"http:///etc/passwd", invalid, invalidURL},
		{"http://exa mple.com/", invalid, invalidURL},
		{"http://[::1/", invalid, invalidURL},
		{"http://ex%00ample.com/", invalid, invalidURL},
		{"http://example.com\\@127.0.0.1:" + T + "/", invalid, invalidURL},
		{"http://a..b/", invalid, invalidURL},
		{"http://exa!mple.com/", invalid, invalidURL},
		{"http://" + strings.Repeat("a", 64) + ".com/", invalid, invalidURL},
	}
}

// TestHostileURLs refuses every hostile URL with the right code and
// message, and proves that none of them reached a local address: the trap
// listening on every interface counts no connection.
func TestHostileURLs(t *testing.T) {
	l := newLab(t)
	for name, addrs := range lookups {
		l.dns.set(name, addrs...)
	}
	h := harness(t, l.fetcher(t, webfetch.Options{}))
	cases := hostileURLs(l)
	if len(cases) < 80 {
		t.Fatalf("only %d hostile URLs; the table must have at least 80", len(cases))
	}
	for _, c := range cases {
		o := h.Call("alice", webfetch.ToolName, args(c.url))
		if o.OK {
			t.Errorf("%s: fetched %s; want %s %q", c.url, o.Result, c.code, c.msg)
			continue
		}
		if o.Error.Code != c.code || !strings.HasPrefix(o.Error.Message, c.msg) {
			t.Errorf("%s:\n got %s %q\nwant %s %q…", c.url, o.Error.Code, o.Error.Message, c.code, c.msg)
		}
	}
	if n := l.trap.count.Load(); n != 0 {
		t.Errorf("the trap on every local address got %d connections; want none", n)
	}
	t.Logf("%d hostile URLs refused", len(cases))
}
