package awscall

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// TestStall runs the AWS HTTP client (stallBounded) against a server that
// moves bytes slowly or stops: a request or an answer that keeps moving
// finishes, however long it takes; one that stops fails after about
// AttemptStall.
func TestStall(t *testing.T) {
	const (
		chunk = 16 << 10
		pace  = 20 * time.Millisecond // 800 KB/s: 1.5 MB take about 2 s, well over AttemptStall
		size  = 96 * chunk
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, chunk)
		switch r.URL.Path {
		case "/slow-upload", "/stop-sending":
			for n := 0; ; n += chunk {
				if r.URL.Path == "/stop-sending" && n >= size/4 {
					time.Sleep(3 * AttemptStall)
					return
				}
				if _, err := io.ReadFull(r.Body, buf); err != nil {
					break
				}
				time.Sleep(pace)
			}
		case "/slow-download":
			for range size / chunk {
				if _, err := w.Write(buf); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				time.Sleep(pace)
			}
		case "/no-answer":
			io.Copy(io.Discard, r.Body)
			time.Sleep(3 * AttemptStall)
		}
	}))
	// A small receive window, as a slow link gives: the client's writes
	// wait for the server to read.
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.(*net.TCPConn).SetReadBuffer(32 << 10)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	client := stallBounded(awshttp.NewBuildableClient(), AttemptStall)

	tests := []struct {
		path    string
		body    int
		wantErr bool
	}{
		{"/slow-upload", size, false},
		{"/slow-download", 0, false},
		{"/stop-sending", size, true},
		{"/no-answer", chunk, true},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.path, "/"), func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPut, srv.URL+tt.path, bytes.NewReader(make([]byte, tt.body)))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := client.Do(req)
			if err == nil {
				_, err = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			took := time.Since(start)
			var timeout interface{ Timeout() bool }
			switch {
			case !tt.wantErr && err != nil:
				t.Errorf("failed after %v: %v", took, err)
			case !tt.wantErr && took < 2*AttemptStall:
				t.Errorf("took %v: not slow enough to prove anything", took)
			case tt.wantErr && (err == nil || !errors.As(err, &timeout) || !timeout.Timeout()):
				t.Errorf("got %v after %v, want a timeout", err, took)
			case tt.wantErr && took > 2*AttemptStall:
				t.Errorf("the stall was noticed after %v, want about %v", took, AttemptStall)
			}
		})
	}
}
