package webfetch

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/toolshed/toolshed/shared/netguard"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// Limits of a fetch (its contract, and the design's network rules).
const (
	// MaxBodyBytes is the largest body, counted after decompression.
	MaxBodyBytes = 5 << 20
	// MaxRedirects is how many redirects a fetch follows; one more is refused.
	MaxRedirects = 5
	// DefaultTimeout bounds a whole fetch: connecting, redirects, reading
	// the body. It stays well inside the contract's 15 s.
	DefaultTimeout = 10 * time.Second
)

// Options configure a Fetcher.
type Options struct {
	// AllowedDomains are the hosts that may be fetched: "example.com"
	// (exactly that host) or "*.example.com" (its subdomains). Empty
	// allows every domain.
	AllowedDomains []string
	// RejectTypes are refused media types, "image/png" or "image/*"; nil
	// means DefaultRejectTypes.
	RejectTypes []string
	// Timeout bounds a whole fetch; 0 means DefaultTimeout.
	Timeout time.Duration

	// The rest are for tests only.

	// Resolver looks names up; nil is the system's.
	Resolver *net.Resolver
	// AllowAddrs are exact loopback addresses (the test's own servers)
	// that may be reached although they are not public.
	AllowAddrs []netip.AddrPort
	// RootCAs verify servers' certificates; nil is the system's pool.
	RootCAs *x509.CertPool
}

// Fetcher fetches URLs with the checks of the package doc. It is safe for
// concurrent use and keeps connections to public servers alive.
type Fetcher struct {
	client  *http.Client
	timeout time.Duration
	allowed allowlist
	reject  []string
}

// New returns a Fetcher, or an error if an allowlist entry or a rejected
// type is malformed.
func New(o Options) (*Fetcher, error) {
	allowed, err := newAllowlist(o.AllowedDomains)
	if err != nil {
		return nil, err
	}
	if o.RejectTypes == nil {
		o.RejectTypes = DefaultRejectTypes()
	}
	reject, err := mediaTypes(o.RejectTypes)
	if err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	guard := &netguard.Guard{Allow: o.AllowAddrs}
	dialer := &net.Dialer{Timeout: o.Timeout, Resolver: o.Resolver, Control: guard.Control}
	f := &Fetcher{timeout: o.Timeout, allowed: allowed, reject: reject}
	f.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil, // never a proxy from the environment
			DialContext:            dialer.DialContext,
			TLSClientConfig:        &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12},
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           32,
			IdleConnTimeout:        30 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: f.checkRedirect,
		Timeout:       o.Timeout,
	}
	return f, nil
}

// Page is a fetched response: the tool's result.
type Page struct {
	OK          bool              `json:"ok"`
	Status      int               `json:"status"`
	Headers     map[string]string `json:"headers"`
	Content     string            `json:"content"`
	ContentType string            `json:"content_type"`
	Bytes       int               `json:"bytes"`
	FinalURL    string            `json:"final_url"`
}

// userAgent identifies Toolshed to the servers it fetches from.
const userAgent = "Toolshed-web-fetch/1.0 (+https://github.com/toolshed/toolshed)"

// Fetch GETs rawURL and returns the page, or a *toolerr.Error in the
// seed's words.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (Page, error) {
	u, err := f.checkURL(rawURL)
	if err != nil {
		return Page{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Page{}, toolerr.New(toolerr.InvalidInput, "url: cannot be requested (%v)", err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/json,text/plain;q=0.9,*/*;q=0.8")
	resp, err := f.client.Do(req)
	if err != nil {
		return Page{}, f.networkError(err)
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Page{}, toolerr.New(toolerr.UpstreamError, "Request failed with status code: %d", resp.StatusCode).
			With("status", resp.StatusCode).With("url", resp.Request.URL.String())
	}
	// Go decompresses gzip itself (resp.Uncompressed); any other encoding
	// was not asked for and cannot be read.
	if enc := resp.Header.Get("Content-Encoding"); !resp.Uncompressed && enc != "" && !strings.EqualFold(enc, "identity") {
		return Page{}, toolerr.New(toolerr.UpstreamError, "Network error: unsupported content encoding %q", enc)
	}
	if resp.ContentLength > MaxBodyBytes {
		return Page{}, tooLarge()
	}
	body := bufio.NewReaderSize(io.LimitReader(resp.Body, MaxBodyBytes+1), sniffLen)
	contentType := resp.Header.Get("Content-Type")
	mediaType := mediaTypeOf(contentType)
	if contentType == "" {
		head, err := body.Peek(sniffLen)
		if err != nil && !errors.Is(err, io.EOF) {
			return Page{}, f.networkError(err)
		}
		mediaType = mediaTypeOf(http.DetectContentType(head))
	}
	if rejected(f.reject, mediaType) {
		return Page{}, toolerr.New(toolerr.AccessDenied, "Disallowed content type: %s", mediaType).
			With("contentType", mediaType).With("reason", "binary content types are not fetched")
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return Page{}, f.networkError(err)
	}
	if len(data) > MaxBodyBytes {
		return Page{}, tooLarge()
	}
	return Page{
		OK:          true,
		Status:      resp.StatusCode,
		Headers:     joinHeaders(resp.Header),
		Content:     decodeText(data, contentType),
		ContentType: contentType,
		Bytes:       len(data),
		FinalURL:    resp.Request.URL.String(),
	}, nil
}

// checkRedirect re-checks every redirect target as the first URL was
// checked (the connection to it is checked again when dialled) and stops
// after MaxRedirects.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return toolerr.New(toolerr.UpstreamError, "Network error: stopped after %d redirects", MaxRedirects).
			With("url", via[len(via)-1].URL.String())
	}
	u, err := f.checkURL(req.URL.String())
	if err != nil {
		return err
	}
	req.URL = u
	req.Host = ""
	return nil
}

func tooLarge() *toolerr.Error {
	return toolerr.New(toolerr.SizeLimitExceeded, "Content size exceeds limit of 5 MB.").With("limitBytes", MaxBodyBytes)
}

// networkError maps a failed request onto the seed's words. Refusals come
// first (a redirect check, an address refused at connect time); other
// failures are "Network error: <reason>" with a reason that does not echo
// internal details such as the resolver's address.
func (f *Fetcher) networkError(err error) error {
	var te *toolerr.Error
	if errors.As(err, &te) {
		return te
	}
	var refused *netguard.RefusedError
	if errors.As(err, &refused) {
		host := "the host"
		var ue *url.Error
		if errors.As(err, &ue) {
			if u, perr := url.Parse(ue.URL); perr == nil {
				host = u.Hostname()
			}
		}
		e := disallowedAddress(host, "resolves to a "+string(refused.Class)+" address")
		e.Cause = err
		return e
	}
	e := toolerr.New(toolerr.UpstreamError, "Network error: %s", f.reason(err))
	e.Cause = err
	return e
}

// reason says in a few words why a request failed.
func (f *Fetcher) reason(err error) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var netErr net.Error
	switch {
	case errors.As(err, &dnsErr):
		switch {
		case dnsErr.IsNotFound:
			return fmt.Sprintf("cannot resolve %s (no such host)", dnsErr.Name)
		case dnsErr.IsTimeout:
			return fmt.Sprintf("cannot resolve %s (DNS timed out)", dnsErr.Name)
		}
		return fmt.Sprintf("cannot resolve %s", dnsErr.Name)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("timed out after %s", f.timeout)
	case errors.As(err, &certErr):
		return fmt.Sprintf("TLS certificate not accepted (%v)", certErr.Err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the server"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the server closed the connection early"
	}
	var rhe tls.RecordHeaderError
	if errors.As(err, &rhe) {
		return "the server does not speak TLS"
	}
	return "the request failed"
}

// joinHeaders flattens response headers, joining repeated ones with ", ".
func joinHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		out[k] = strings.Join(vs, ", ")
	}
	return out
}
