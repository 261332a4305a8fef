package awscall

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// TestStall runs the AWS HTTP client (bounded) against a server that
// moves bytes slowly or stops: a request or an answer that keeps moving
// finishes, however long it takes; one that stops fails after about
// AttemptStall, unless the call is marked Patiently.
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
	client := bounded(awshttp.NewBuildableClient())

	tests := []struct {
		name    string
		path    string
		body    int
		patient bool
		wantErr bool
	}{
		{"slow upload", "/slow-upload", size, false, false},
		{"slow download", "/slow-download", 0, false, false},
		{"stop sending", "/stop-sending", size, false, true},
		{"no answer", "/no-answer", chunk, false, true},
		{"a late answer to a patient call", "/no-answer", chunk, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			if tt.patient {
				ctx = Patiently(ctx)
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+tt.path, bytes.NewReader(make([]byte, tt.body)))
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
			switch {
			case !tt.wantErr && err != nil:
				t.Errorf("failed after %v: %v", took, err)
			case !tt.wantErr && took < 2*AttemptStall:
				t.Errorf("took %v: not slow enough to prove anything", took)
			case tt.wantErr && err == nil:
				t.Errorf("succeeded after %v, want a failure", took)
			case tt.wantErr && took > 5*AttemptStall: // sending takes part of it, and make test loads the machine
				t.Errorf("the stall was noticed after %v, want about %v", took, AttemptStall)
			}
		})
	}
}
