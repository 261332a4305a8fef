package emulator

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"
)

// Proxy stands between a server and an emulator on a fixed loopback
// address, so a fault test can change how the emulator looks to the
// server without touching the server: pass requests on, hold each answer
// back (Delay), answer every request with a throttling error (Throttle),
// hold chosen requests back or without an answer (Hold), or stop
// listening (Refuse) and start again (Resume).
type Proxy struct {
	// Addr is "127.0.0.1:<port>", the address the server is given.
	Addr string

	target *httputil.ReverseProxy

	mu       sync.Mutex
	failures []string // the last requests the emulator failed, for diagnostics
	delay    time.Duration
	throttle *Canned
	hold     func(*http.Request) bool // the requests Hold holds back; nil: none
	holds    int                      // how many more it may hold; < 0: any number
	holdFor  time.Duration
	srv      *http.Server // nil while refusing
}

// Canned is a fixed HTTP answer.
type Canned struct {
	Status  int
	Header  map[string]string
	Body    string
	Service string // for messages
}

// Throttling answers of the services, as their APIs send them.
var (
	ThrottleDynamoDB = &Canned{
		Service: "DynamoDB",
		Status:  http.StatusBadRequest,
		Header: map[string]string{
			"Content-Type":     "application/x-amz-json-1.0",
			"X-Amzn-ErrorType": "ProvisionedThroughputExceededException",
		},
		Body: `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"The level of configured provisioned throughput for the table was exceeded."}`,
	}
	ThrottleS3 = &Canned{
		Service: "S3",
		Status:  http.StatusServiceUnavailable,
		Header:  map[string]string{"Content-Type": "application/xml"},
		Body:    `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`,
	}
)

// StartProxy runs a proxy in front of target ("http://127.0.0.1:port")
// until the test ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("emulator: proxy target %q: %v", target, err)
	}
	port, err := FreePort()
	if err != nil {
		t.Fatalf("emulator: %v", err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	var p *Proxy
	rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		p.mu.Lock()
		p.failures = append(p.failures[max(0, len(p.failures)-20):], fmt.Sprintf("%s %s: %v", time.Now().Format("15:04:05.000"), r.URL, err))
		p.mu.Unlock()
		// The emulator is gone: the server sees its connection dropped.
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		w.WriteHeader(http.StatusBadGateway)
	}
	p = &Proxy{Addr: net.JoinHostPort("127.0.0.1", fmt.Sprint(port)), target: rp}
	if err := p.Resume(); err != nil {
		t.Fatalf("emulator: proxy: %v", err)
	}
	t.Cleanup(func() { p.Refuse() })
	return p
}

// Failures returns the last requests that could not reach the emulator.
func (p *Proxy) Failures() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.failures)
}

// URL is the proxy's base URL.
func (p *Proxy) URL() string { return "http://" + p.Addr }

// Pass makes the proxy pass every request on as it is.
func (p *Proxy) Pass() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay, p.throttle, p.hold = 0, nil, nil
}

// Forever is a Hold that never passes a request on.
const Forever time.Duration = -1

// Hold holds the next n requests for which match is true (every one when
// n < 0) back for d before passing them on, or, for Forever, until their
// client gives up; the others pass. match is called for every request, in
// the order they arrive.
func (p *Proxy) Hold(n int, match func(*http.Request) bool, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold, p.holds, p.holdFor = match, n, d
}

// held returns how long r is held back (0: not at all).
func (p *Proxy) held(r *http.Request) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold == nil || p.holds == 0 || !p.hold(r) {
		return 0
	}
	p.holds--
	return p.holdFor
}

// Delay holds every request back d before passing it on.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay, p.throttle = d, nil
}

// Throttle answers every request with c, without passing it on.
func (p *Proxy) Throttle(c *Canned) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay, p.throttle = 0, c
}

// Refuse stops listening (and drops open connections): connections are
// refused.
func (p *Proxy) Refuse() error {
	p.mu.Lock()
	srv := p.srv
	p.srv = nil
	p.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close()
}

// Resume listens again on Addr.
func (p *Proxy) Resume() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp", p.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", p.Addr, err)
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve)}
	go p.srv.Serve(ln)
	return nil
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	held := p.held(r)
	if held == Forever {
		// Read the request (only then does the server notice its
		// client leave) and never answer.
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
		return
	}
	p.mu.Lock()
	delay, throttle := p.delay+held, p.throttle
	p.mu.Unlock()
	if throttle != nil {
		for k, v := range throttle.Header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(throttle.Status)
		fmt.Fprint(w, throttle.Body)
		return
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	p.target.ServeHTTP(w, r)
}
