package webfetch_test

import (
	"bytes"
	"compress/gzip"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/webfetch"
)

// lab is the test's own network. Its DNS server is the only resolver the
// fetchers use; its HTTP and HTTPS servers are the only loopback addresses
// they may reach (the test switch, Options.AllowAddrs); and its trap
// listens on every local address, so any connection a refused URL got
// would show up in the trap's count.
type lab struct {
	dns   *dnsServer
	trap  *trap
	plain *httptest.Server
	tls   *httptest.Server
	roots *x509.CertPool
	// site is the plain server by name, "http://site.test:<port>";
	// secure the TLS server as "https://example.com:<port>" (a name its
	// certificate carries).
	site, secure string
	// requests counts requests the servers answered.
	requests atomic.Int64
	// bombWritten counts the compressed bytes the gzip bomb sent.
	bombWritten atomic.Int64
}

func newLab(t testing.TB) *lab {
	t.Helper()
	l := &lab{dns: startDNS(t), trap: startTrap(t, ":0")}
	h := l.handler()
	quiet := log.New(io.Discard, "", 0) // refused handshakes are expected
	l.plain = httptest.NewUnstartedServer(h)
	l.plain.Config.ErrorLog = quiet
	l.plain.Start()
	t.Cleanup(l.plain.Close)
	l.tls = httptest.NewUnstartedServer(h)
	l.tls.Config.ErrorLog = quiet
	l.tls.StartTLS()
	t.Cleanup(l.tls.Close)
	l.roots = x509.NewCertPool()
	l.roots.AddCert(l.tls.Certificate())
	l.site = "http://site.test:" + port(l.plain)
	l.secure = "https://example.com:" + port(l.tls)
	l.dns.set("site.test", "127.0.0.1")
	l.dns.set("example.com", "127.0.0.1")
	return l
}

// trapPort is the port of the trap, for hostile URLs.
func (l *lab) trapPort() string { return strconv.Itoa(l.trap.port) }

// fetcher returns a fetcher that resolves through the lab's DNS and may
// reach the lab's servers; o's other settings are kept.
func (l *lab) fetcher(t testing.TB, o webfetch.Options) *webfetch.Fetcher {
	t.Helper()
	o.Resolver = l.dns.resolver()
	o.RootCAs = l.roots
	o.AllowAddrs = append(o.AllowAddrs, addrPort(l.plain), addrPort(l.tls))
	f, err := webfetch.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// harness serves the fetcher's tool through the real pipeline.
func harness(t *testing.T, f *webfetch.Fetcher) *tooltest.Harness {
	t.Helper()
	return harnessFor(t, []toolkit.Tool{f.Tool()})
}

// harnessFor serves tools through the real pipeline.
func harnessFor(t *testing.T, tools []toolkit.Tool) *tooltest.Harness {
	t.Helper()
	stores := tooltest.BoltStores(t)
	return tooltest.New(t, stores, tools)
}

// args is the tool's arguments for a URL.
func args(u string) string {
	return fmt.Sprintf(`{"url": %q}`, u)
}

func port(s *httptest.Server) string {
	return strconv.Itoa(s.Listener.Addr().(*net.TCPAddr).Port)
}

func addrPort(s *httptest.Server) netip.AddrPort {
	return s.Listener.Addr().(*net.TCPAddr).AddrPort()
}

// trap accepts and counts connections.
type trap struct {
	port  int
	count atomic.Int64
}

func startTrap(t testing.TB, addr string) *trap {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	tr := &trap{port: ln.Addr().(*net.TCPAddr).Port}
	go func() {
		for {
			c, err := ln.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err == nil {
				tr.count.Add(1)
				c.Close()
			}
		}
	}()
	return tr
}

// The lab servers' pages.
func (l *lab) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Add("X-Twice", "a")
		w.Header().Add("X-Twice", "b")
		fmt.Fprint(w, "<p>hello from the lab</p>")
	})
	// /redirect?to=URL&code=302 redirects once; /chain/N redirects N
	// times, then to ?to= or to a page.
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		redirect(w, r.URL.Query().Get("to"), r.URL.Query().Get("code"))
	})
	mux.HandleFunc("/chain/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		to := r.URL.Query().Get("to")
		switch {
		case n > 0:
			redirect(w, fmt.Sprintf("/chain/%d?to=%s", n-1, url.QueryEscape(to)), "")
		case to != "":
			redirect(w, to, "")
		default:
			fmt.Fprint(w, "end of the chain")
		}
	})
	// /size/N sends N bytes of text, streamed (no Content-Length) unless
	// ?length=1.
	mux.HandleFunc("/size/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Query().Get("length") == "1" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		writeRepeated(w, 'a', n)
	})
	// /gzip/N sends N bytes of text gzip-compressed.
	mux.HandleFunc("/gzip/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		writeRepeated(zw, 'a', n)
		zw.Close()
	})
	// /bomb sends a gzip stream that would inflate to 100 GiB: the same
	// 1 MiB-of-zeros member, over and over, until the client hangs up.
	mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		var member bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
		zw.Write(make([]byte, 1<<20))
		zw.Close()
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Encoding", "gzip")
		for range 100 << 10 {
			n, err := w.Write(member.Bytes())
			l.bombWritten.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	// /drip sends one byte every 20 ms forever; /stall never answers.
	mux.HandleFunc("/drip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	// /typed?ct=TYPE&body=TEXT sends body (default "data") as TYPE, after
	// pad=N bytes of "x"; with ct=none it sends a PNG signature and no
	// Content-Type at all.
	mux.HandleFunc("/typed", func(w http.ResponseWriter, r *http.Request) {
		ct, body := r.URL.Query().Get("ct"), r.URL.Query().Get("body")
		if body == "" {
			body = "data"
		}
		if ct == "none" {
			w.Header()["Content-Type"] = nil
			body = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
		} else {
			w.Header().Set("Content-Type", ct)
		}
		pad, _ := strconv.Atoi(r.URL.Query().Get("pad"))
		body = strings.Repeat("x", pad) + body
		if enc := r.URL.Query().Get("encoding"); enc != "" {
			w.Header().Set("Content-Encoding", enc)
		}
		fmt.Fprint(w, body)
	})
	mux.HandleFunc("/status/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		w.WriteHeader(n)
	})
	// /echo returns the request's headers, one per line.
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for k, v := range r.Header {
			fmt.Fprintf(w, "%s: %s\n", k, strings.Join(v, ", "))
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.requests.Add(1)
		mux.ServeHTTP(w, r)
	})
}

func redirect(w http.ResponseWriter, to, code string) {
	status, err := strconv.Atoi(code)
	if err != nil {
		status = http.StatusFound
	}
	w.Header().Set("Location", to)
	w.WriteHeader(status)
}

func writeRepeated(w io.Writer, b byte, n int) {
	chunk := bytes.Repeat([]byte{b}, 64<<10)
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return
		}
		n -= k
	}
}
