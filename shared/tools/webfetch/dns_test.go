package webfetch_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsServer is an authoritative DNS server on UDP loopback speaking the
// real wire format, so the fetcher's resolver works exactly as it does
// against a real one. Each name has a list of answers; the n-th lookup of a
// name gets the n-th answer (the last one repeats), which is how a DNS
// rebinding attack looks from the client.
type dnsServer struct {
	conn    net.PacketConn
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	lookups map[string]int // A queries seen per name
}

func startDNS(t testing.TB) *dnsServer {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dnsServer{conn: conn, answers: map[string][][]netip.Addr{}, lookups: map[string]int{}}
	t.Cleanup(func() { conn.Close() })
	go s.serve()
	return s
}

// set makes name resolve to addrs (A and AAAA answers by family); more
// than one call gives successive lookups successive answers.
func (s *dnsServer) set(name string, addrs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var as []netip.Addr
	for _, a := range addrs {
		as = append(as, netip.MustParseAddr(a))
	}
	s.answers[name] = append(s.answers[name], as)
}

// resolver returns a Go resolver that asks only this server.
func (s *dnsServer) resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", s.conn.LocalAddr().String())
		},
	}
}

func (s *dnsServer) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		var q dnsmessage.Message
		if q.Unpack(buf[:n]) != nil || len(q.Questions) != 1 {
			continue
		}
		r := s.answer(q)
		out, err := r.Pack()
		if err == nil {
			s.conn.WriteTo(out, from)
		}
	}
}

func (s *dnsServer) answer(q dnsmessage.Message) dnsmessage.Message {
	question := q.Questions[0]
	name := strings.TrimSuffix(strings.ToLower(question.Name.String()), ".")
	r := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: q.ID, Response: true, Authoritative: true, RecursionAvailable: true},
		Questions: q.Questions,
	}
	s.mu.Lock()
	sets, ok := s.answers[name]
	i := s.lookups[name]
	if question.Type == dnsmessage.TypeA {
		s.lookups[name]++
	}
	s.mu.Unlock()
	if !ok {
		r.RCode = dnsmessage.RCodeNameError
		return r
	}
	addrs := sets[min(i, len(sets)-1)]
	for _, a := range addrs {
		h := dnsmessage.ResourceHeader{Name: question.Name, Class: dnsmessage.ClassINET}
		switch {
		case question.Type == dnsmessage.TypeA && a.Is4():
			h.Type = dnsmessage.TypeA
			r.Answers = append(r.Answers, dnsmessage.Resource{Header: h, Body: &dnsmessage.AResource{A: a.As4()}})
		case question.Type == dnsmessage.TypeAAAA && a.Is6():
			h.Type = dnsmessage.TypeAAAA
			r.Answers = append(r.Answers, dnsmessage.Resource{Header: h, Body: &dnsmessage.AAAAResource{AAAA: a.As16()}})
		}
	}
	return r
}
