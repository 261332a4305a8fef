// Package netguard decides which IP addresses an outbound connection may
// reach: public unicast addresses only. Classify names the kind of any
// address (loopback, private, link-local, CGNAT, multicast, broadcast,
// unspecified, documentation, reserved, and IPv4 addresses embedded in IPv6
// as IPv4-mapped, IPv4-compatible, 6to4 or NAT64 forms). Guard.Control plugs
// the decision into net.Dialer, so it applies to the address actually
// connected to, after DNS resolution, on every redirect and every retry.
// ParseIPv4 reads the old numeric spellings of IPv4 addresses (2130706433,
// 0x7f.1, 0177.0.0.1) that browsers and C libraries still accept.
package netguard

import (
	"fmt"
	"net/netip"
	"syscall"
)

// Class is the kind of an IP address. Public is the only class a
// connection may reach.
type Class string

// The classes. Embedded forms are named "<form> of <class>", e.g.
// "NAT64 form of loopback".
const (
	Public         Class = "public"
	Loopback       Class = "loopback"
	Private        Class = "private"
	LinkLocal      Class = "link-local"
	SharedCGNAT    Class = "shared (CGNAT)"
	Multicast      Class = "multicast"
	Broadcast      Class = "broadcast"
	Unspecified    Class = "unspecified"
	Documentation  Class = "documentation"
	Reserved       Class = "reserved"
	IPv4Mapped     Class = "IPv4-mapped"
	IPv4Compatible Class = "IPv4-compatible"
)

type rangeClass struct {
	prefix netip.Prefix
	class  Class
}

func ranges(pairs ...string) []rangeClass {
	out := make([]rangeClass, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, rangeClass{netip.MustParsePrefix(pairs[i]), Class(pairs[i+1])})
	}
	return out
}

// v4Ranges are the IANA IPv4 special-purpose ranges that are not globally
// reachable, plus multicast and the reserved class E. The first match wins.
var v4Ranges = ranges(
	"0.0.0.0/8", string(Unspecified), // "this network"
	"10.0.0.0/8", string(Private),
	"100.64.0.0/10", string(SharedCGNAT),
	"127.0.0.0/8", string(Loopback),
	"169.254.0.0/16", string(LinkLocal), // includes the cloud metadata address 169.254.169.254
	"172.16.0.0/12", string(Private),
	"192.0.0.0/24", string(Reserved), // IETF protocol assignments
	"192.0.2.0/24", string(Documentation),
	"192.88.99.0/24", string(Reserved), // former 6to4 relay anycast
	"192.168.0.0/16", string(Private),
	"198.18.0.0/15", string(Reserved), // benchmarking
	"198.51.100.0/24", string(Documentation),
	"203.0.113.0/24", string(Documentation),
	"224.0.0.0/4", string(Multicast),
	"255.255.255.255/32", string(Broadcast),
	"240.0.0.0/4", string(Reserved),
)

// v6Ranges are the IPv6 special-purpose ranges checked before the rule
// that a public IPv6 address lies in 2000::/3. IPv4-mapped, IPv4-compatible,
// 6to4 and NAT64 addresses are handled by Classify itself.
var v6Ranges = ranges(
	"::/128", string(Unspecified),
	"::1/128", string(Loopback),
	"64:ff9b:1::/48", string(Private), // local-use NAT64 (RFC 8215)
	"100::/64", string(Reserved), // discard-only
	"2001::/23", string(Reserved), // IETF protocol assignments, incl. Teredo
	"2001:db8::/32", string(Documentation),
	"3fff::/20", string(Documentation),
	"5f00::/16", string(Reserved), // SRv6 SIDs
	"fc00::/7", string(Private), // unique local, incl. AWS metadata fd00:ec2::254
	"fe80::/10", string(LinkLocal),
	"fec0::/10", string(Reserved), // deprecated site-local
	"ff00::/8", string(Multicast),
)

var (
	mapped    = netip.MustParsePrefix("::ffff:0:0/96")
	compat    = netip.MustParsePrefix("::/96")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	global6   = netip.MustParsePrefix("2000::/3")
)

// Classify returns the class of a. The zone of an IPv6 address is ignored.
// An invalid (zero) Addr is Reserved.
func Classify(a netip.Addr) Class {
	a = a.WithZone("")
	switch {
	case !a.IsValid():
		return Reserved
	case a.Is4():
		for _, r := range v4Ranges {
			if r.prefix.Contains(a) {
				return r.class
			}
		}
		return Public
	case mapped.Contains(a):
		// Never public: a literal ::ffff:a.b.c.d hides an IPv4 address
		// behind IPv6 syntax, and no resolver should answer with one.
		return embedded(IPv4Mapped, a.Unmap(), true)
	}
	for _, r := range v6Ranges {
		if r.prefix.Contains(a) {
			return r.class
		}
	}
	b := a.As16()
	switch {
	case compat.Contains(a):
		return embedded(IPv4Compatible, netip.AddrFrom4([4]byte(b[12:16])), true)
	case nat64.Contains(a):
		return embedded("NAT64 form", netip.AddrFrom4([4]byte(b[12:16])), false)
	case sixToFour.Contains(a):
		return embedded("6to4 form", netip.AddrFrom4([4]byte(b[2:6])), false)
	case !global6.Contains(a):
		return Reserved
	}
	return Public
}

// embedded classifies an IPv6 form that carries IPv4 address v4: it is
// public only when v4 is and the form is not always refused.
func embedded(form Class, v4 netip.Addr, alwaysRefused bool) Class {
	inner := Classify(v4)
	switch {
	case inner != Public:
		return Class(fmt.Sprintf("%s of %s", form, inner))
	case alwaysRefused:
		return form
	}
	return Public
}

// RefusedError is the error Guard.Control returns for an address it
// refuses.
type RefusedError struct {
	Addr  netip.Addr
	Class Class
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s address", e.Addr, e.Class)
}

// Guard refuses connections to every address that is not public.
type Guard struct {
	// Allow lists exact addresses (IP and port) that may be reached even
	// though they are not public. It exists for tests, whose servers listen
	// on loopback; production code leaves it empty.
	Allow []netip.AddrPort
}

// Control is a net.Dialer Control function: it runs after DNS resolution,
// just before each connect, with the address being connected to, and
// refuses with a *RefusedError unless that address is public (or allowed).
// Only TCP is permitted.
func (g *Guard) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused to connect to %q: not an IP address and port", address)
	}
	switch network {
	case "tcp4":
		// A tcp4 socket reaches the IPv4 address, however it is written.
		ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	case "tcp", "tcp6":
	default:
		return fmt.Errorf("refused to connect to %s over %s: only TCP is allowed", address, network)
	}
	for _, ok := range g.Allow {
		if ok == ap {
			return nil
		}
	}
	if c := Classify(ap.Addr()); c != Public {
		return &RefusedError{Addr: ap.Addr(), Class: c}
	}
	return nil
}
