package netguard

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
)

// ParseIPv4 reads host the way the WHATWG URL standard (and so every
// browser) and inet_aton do: a host whose last dot-separated part is a
// number is an IPv4 address, written in one to four parts, each decimal,
// octal (leading 0) or hexadecimal (leading 0x), the last part filling the
// remaining bytes. So 2130706433, 0x7f.1, 0177.0.0.1 and 127.1 are all
// 127.0.0.1. One trailing dot is ignored.
//
// isIPv4 is false for a host that does not end in a number (a domain name).
// When it is true, err is non-nil if the host is not a valid address
// (a part too large, a bad digit, more than four parts), and such a host
// must be refused rather than looked up.
func ParseIPv4(host string) (addr netip.Addr, isIPv4 bool, err error) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if !endsInNumber(parts[len(parts)-1]) {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, errors.New("an IPv4 address has at most four parts")
	}
	var v uint64
	for i, p := range parts {
		n, err := ipv4Number(p)
		if err != nil {
			return netip.Addr{}, true, err
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, true, errors.New("an IPv4 address part is larger than 255")
			}
			v = v<<8 | n
			continue
		}
		rest := uint(5 - len(parts)) // bytes the last part fills
		if n >= 1<<(8*rest) {
			return netip.Addr{}, true, errors.New("the last IPv4 address part is too large")
		}
		v = v<<(8*rest) | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// endsInNumber reports whether the last part of a host makes it an IPv4
// address: all decimal digits, or a number IPv4 parsing accepts.
func endsInNumber(last string) bool {
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, err := ipv4Number(last)
	return err == nil
}

// ipv4Number parses one part: 0x or 0X prefix for hexadecimal ("0x" alone
// is 0), a leading 0 for octal, decimal otherwise.
func ipv4Number(p string) (uint64, error) {
	if p == "" {
		return 0, errors.New("an IPv4 address part is empty")
	}
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p == "" {
		return 0, nil
	}
	if p[0] == '+' || p[0] == '-' {
		return 0, errors.New("an IPv4 address part has a sign")
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return 0, errors.New("an IPv4 address part is too large")
		}
		return 0, errors.New("an IPv4 address part is not a number")
	}
	return n, nil
}
