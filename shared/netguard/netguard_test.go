package netguard_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/toolshed/toolshed/shared/netguard"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		addr string
		want netguard.Class
	}{
		{"8.8.8.8", netguard.Public},
		{"93.184.215.14", netguard.Public},
		{"1.1.1.1", netguard.Public},
		{"2606:4700:4700::1111", netguard.Public},
		{"2a00:1450:4001:80b::200e", netguard.Public},
		{"0.0.0.0", netguard.Unspecified},
		{"0.255.1.2", netguard.Unspecified},
		{"10.0.0.1", netguard.Private},
		{"10.255.255.255", netguard.Private},
		{"100.64.0.0", netguard.SharedCGNAT},
		{"100.127.255.255", netguard.SharedCGNAT},
		{"100.128.0.0", netguard.Public},
		{"127.0.0.1", netguard.Loopback},
		{"127.255.255.255", netguard.Loopback},
		{"169.254.169.254", netguard.LinkLocal},
		{"169.254.170.2", netguard.LinkLocal},
		{"172.15.255.255", netguard.Public},
		{"172.16.0.0", netguard.Private},
		{"172.31.255.255", netguard.Private},
		{"172.32.0.0", netguard.Public},
		{"192.0.0.8", netguard.Reserved},
		{"192.0.2.1", netguard.Documentation},
		{"192.88.99.1", netguard.Reserved},
		{"192.168.1.1", netguard.Private},
		{"198.18.0.1", netguard.Reserved},
		{"198.19.255.255", netguard.Reserved},
		{"198.51.100.1", netguard.Documentation},
		{"203.0.113.1", netguard.Documentation},
		{"224.0.0.1", netguard.Multicast},
		{"239.255.255.250", netguard.Multicast},
		{"240.0.0.1", netguard.Reserved},
		{"255.255.255.254", netguard.Reserved},
		{"255.255.255.255", netguard.Broadcast},
		{"::", netguard.Unspecified},
		{"::1", netguard.Loopback},
		{"::ffff:127.0.0.1", "IPv4-mapped of loopback"},
		{"::ffff:8.8.8.8", netguard.IPv4Mapped},
		{"::127.0.0.1", "IPv4-compatible of loopback"},
		{"::8.8.8.8", netguard.IPv4Compatible},
		{"64:ff9b::7f00:1", "NAT64 form of loopback"},
		{"64:ff9b::a9fe:a9fe", "NAT64 form of link-local"},
		{"64:ff9b::808:808", netguard.Public},
		{"64:ff9b:1::1", netguard.Private},
		{"2002:7f00:1::", "6to4 form of loopback"},
		{"2002:a00:1::", "6to4 form of private"},
		{"2002:808:808::1", netguard.Public},
		{"100::1", netguard.Reserved},
		{"2001::1", netguard.Reserved},
		{"2001:db8::1", netguard.Documentation},
		{"3fff::1", netguard.Documentation},
		{"5f00::1", netguard.Reserved},
		{"fc00::1", netguard.Private},
		{"fd00:ec2::254", netguard.Private},
		{"fe80::1", netguard.LinkLocal},
		{"fe80::1%eth0", netguard.LinkLocal},
		{"fec0::1", netguard.Reserved},
		{"ff02::1", netguard.Multicast},
		{"4000::1", netguard.Reserved},
		{"::2", netguard.IPv4Compatible + " of unspecified"},
	}
	for _, tc := range tests {
		if got := netguard.Classify(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Classify(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
	if got := netguard.Classify(netip.Addr{}); got != netguard.Reserved {
		t.Errorf("Classify(zero) = %q, want reserved", got)
	}
}

func TestParseIPv4(t *testing.T) {
	tests := []struct {
		host   string
		want   string // "" when not an address
		isIPv4 bool
		bad    bool
	}{
		{"example.com", "", false, false},
		{"localhost", "", false, false},
		{"foo.0x1g", "", false, false},
		{"1.2.3.4", "1.2.3.4", true, false},
		{"2130706433", "127.0.0.1", true, false},
		{"0x7f000001", "127.0.0.1", true, false},
		{"0X7F000001", "127.0.0.1", true, false},
		{"017700000001", "127.0.0.1", true, false},
		{"0177.0.0.1", "127.0.0.1", true, false},
		{"0x7f.1", "127.0.0.1", true, false},
		{"127.1", "127.0.0.1", true, false},
		{"127.0.1", "127.0.0.1", true, false},
		{"127.0.0.1.", "127.0.0.1", true, false},
		{"0", "0.0.0.0", true, false},
		{"0x", "0.0.0.0", true, false},
		{"0xa9fea9fe", "169.254.169.254", true, false},
		{"0251.0376.0251.0376", "169.254.169.254", true, false},
		{"4294967295", "255.255.255.255", true, false},
		{"4294967296", "", true, true},
		{"256.0.0.1", "", true, true},
		{"1.2.3.4.5", "", true, true},
		{"1.2.65536", "", true, true},
		{"09.1.1.1", "", true, true}, // 9 is not octal
		{"foo.1", "", true, true},
		{"1..2", "", true, true},
		{"99999999999999999999999", "", true, true},
		{"1.2.3.+4", "", false, false},
	}
	for _, tc := range tests {
		a, isIPv4, err := netguard.ParseIPv4(tc.host)
		if isIPv4 != tc.isIPv4 || (err != nil) != tc.bad {
			t.Errorf("ParseIPv4(%q) = %v, %v, %v; want isIPv4 %v, error %v", tc.host, a, isIPv4, err, tc.isIPv4, tc.bad)
			continue
		}
		if tc.want != "" && a != netip.MustParseAddr(tc.want) {
			t.Errorf("ParseIPv4(%q) = %v, want %s", tc.host, a, tc.want)
		}
	}
}

func TestGuardControl(t *testing.T) {
	allowed := netip.MustParseAddrPort("127.0.0.1:8080")
	g := &netguard.Guard{Allow: []netip.AddrPort{allowed}}
	tests := []struct {
		network, address string
		refused          netguard.Class // "" when allowed
	}{
		{"tcp4", "93.184.215.14:443", ""},
		{"tcp6", "[2606:4700:4700::1111]:443", ""},
		{"tcp4", "127.0.0.1:8080", ""}, // the allowed exact address
		{"tcp4", "127.0.0.1:8081", netguard.Loopback},
		{"tcp6", "[::1]:8080", netguard.Loopback},
		{"tcp4", "[::ffff:127.0.0.1]:8080", ""}, // a tcp4 socket reaches 127.0.0.1:8080
		{"tcp4", "[::ffff:10.0.0.1]:80", netguard.Private},
		{"tcp6", "[::ffff:8.8.8.8]:80", netguard.IPv4Mapped},
		{"tcp4", "169.254.169.254:80", netguard.LinkLocal},
		{"tcp6", "[fd00:ec2::254]:80", netguard.Private},
	}
	for _, tc := range tests {
		err := g.Control(tc.network, tc.address, nil)
		var re *netguard.RefusedError
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s %s: refused (%v), want allowed", tc.network, tc.address, err)
		case tc.refused != "" && (!errors.As(err, &re) || re.Class != tc.refused):
			t.Errorf("%s %s: got %v, want refused as %s", tc.network, tc.address, err, tc.refused)
		}
	}
	for _, bad := range [][2]string{{"udp4", "8.8.8.8:53"}, {"tcp", "example.com:80"}, {"unix", "/tmp/x"}} {
		if err := g.Control(bad[0], bad[1], nil); err == nil {
			t.Errorf("%s %s: allowed, want refused", bad[0], bad[1])
		}
	}
}

// FuzzParseIPv4: a host that netip reads as an IPv4 address reads as the
// same address here, and every address ParseIPv4 returns classifies.
func FuzzParseIPv4(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "2130706433", "0x7f.1", "0177.0.0.1", "127.1", "1.2.3.4.",
		"example.com", "256.0.0.1", "0x", "09.1.1.1", "4294967296", "1.2.3.+4", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		a, isIPv4, err := netguard.ParseIPv4(host)
		if want, perr := netip.ParseAddr(host); perr == nil && want.Is4() {
			if !isIPv4 || err != nil || a != want {
				t.Fatalf("ParseIPv4(%q) = %v, %v, %v; netip reads %v", host, a, isIPv4, err, want)
			}
		}
		if isIPv4 && err == nil && (!a.Is4() || netguard.Classify(a) == "") {
			t.Fatalf("ParseIPv4(%q) = %v", host, a)
		}
		if !isIPv4 && (err != nil || a.IsValid()) {
			t.Fatalf("ParseIPv4(%q) = %v, %v, %v for a non-numeric host", host, a, isIPv4, err)
		}
	})
}
