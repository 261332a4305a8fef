package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
)

// vectorFor is what the test servers answer for a text: dims values
// derived from its length and first byte, so answers can be checked.
func vectorFor(text string, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(len(text)) + float32(i)/100
	}
	if text != "" {
		v[0] = float32(text[0])
	}
	return v
}

// ---- Bedrock ----

// titanServer speaks Bedrock Runtime's InvokeModel for Titan V2:
// POST /model/{modelId}/invoke with a JSON body. fail, when set, decides
// the answer to each request (n from 1) before the normal one.
type titanServer struct {
	mu       sync.Mutex
	requests []titanRequest
	paths    []string
	fail     func(n int, w http.ResponseWriter) bool
}

func (s *titanServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.paths = append(s.paths, r.Method+" "+r.URL.EscapedPath()+" "+r.Header.Get("Content-Type"))
	var req titanRequest
	json.Unmarshal(raw, &req)
	s.requests = append(s.requests, req)
	n := len(s.requests)
	s.mu.Unlock()
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	if s.fail != nil && s.fail(n, w) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"embedding":           vectorFor(req.InputText, req.Dimensions),
		"inputTextTokenCount": len(strings.Fields(req.InputText)),
		"embeddingsByType":    map[string]any{"float": vectorFor(req.InputText, req.Dimensions)},
	})
}

// bedrockError writes an error the way Bedrock does.
func bedrockError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"message":%q}`, msg)
}

func newBedrock(t *testing.T, srv *titanServer, dims int) *Bedrock {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	client := NewBedrockClient(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
	}, func(o *bedrockruntime.Options) {
		o.BaseEndpoint = aws.String(hs.URL)
		o.Retryer = retry.NewStandard(func(s *retry.StandardOptions) {
			s.MaxAttempts = bedrockAttempts
			s.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
		})
	})
	return NewBedrock(client, dims, Pace{})
}

func TestBedrockWireFormat(t *testing.T) {
	srv := &titanServer{}
	b := newBedrock(t, srv, 256)
	texts := make([]string, 20)
	for i := range texts {
		texts[i] = fmt.Sprintf("text number %d", i)
	}
	vecs, err := b.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if b.Model() != "amazon.titan-embed-text-v2:0/256" {
		t.Errorf("model %s", b.Model())
	}
	if len(vecs) != 20 {
		t.Fatalf("%d vectors", len(vecs))
	}
	for i, v := range vecs {
		if want := vectorFor(texts[i], 256); len(v) != 256 || v[0] != want[0] || v[1] != want[1] {
			t.Errorf("vector %d does not belong to its text", i)
		}
	}
	if len(srv.requests) != 20 {
		t.Errorf("%d requests for 20 texts, want one each (Titan takes one text)", len(srv.requests))
	}
	for _, r := range srv.requests {
		if r.Dimensions != 256 || !r.Normalize || len(r.EmbeddingTypes) != 1 || r.EmbeddingTypes[0] != "float" {
			t.Errorf("request body %+v", r)
		}
	}
	if want := "POST /model/amazon.titan-embed-text-v2%3A0/invoke application/json"; srv.paths[0] != want {
		t.Errorf("request %q, want %q", srv.paths[0], want)
	}
}

func TestBedrockThrottlingIsRetried(t *testing.T) {
	srv := &titanServer{fail: func(n int, w http.ResponseWriter) bool {
		if n <= 2 {
			bedrockError(w, http.StatusTooManyRequests, "ThrottlingException", "Too many requests, please wait before trying again.")
			return true
		}
		return false
	}}
	vecs, err := newBedrock(t, srv, 512).Embed(context.Background(), []string{"hello"})
	if err != nil || len(vecs) != 1 || len(vecs[0]) != 512 {
		t.Fatalf("after two throttles: %v, %v", vecs, err)
	}
	if len(srv.requests) != 3 {
		t.Errorf("%d requests, want 3 (two throttled, one served)", len(srv.requests))
	}
}

func TestBedrockErrors(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		typ      string
		requests int
		why      error // ErrThrottled, ErrUnavailable, or nil: not worth trying again
	}{
		{"validation is not retried", http.StatusBadRequest, "ValidationException", 1, nil},
		{"access denied is not retried", http.StatusForbidden, "AccessDeniedException", 1, nil},
		{"persistent throttling gives up", http.StatusTooManyRequests, "ThrottlingException", bedrockAttempts, ErrThrottled},
		{"server errors are retried", http.StatusInternalServerError, "InternalServerException", bedrockAttempts, ErrUnavailable},
		{"unavailable is retried", http.StatusServiceUnavailable, "ServiceUnavailableException", bedrockAttempts, ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &titanServer{fail: func(int, http.ResponseWriter) bool { return false }}
			srv.fail = func(_ int, w http.ResponseWriter) bool {
				bedrockError(w, tt.status, tt.typ, "nope")
				return true
			}
			_, err := newBedrock(t, srv, 256).Embed(context.Background(), []string{"x"})
			if err == nil || !strings.Contains(err.Error(), tt.typ) {
				t.Errorf("error %v, want one naming %s", err, tt.typ)
			}
			if len(srv.requests) != tt.requests {
				t.Errorf("%d requests, want %d", len(srv.requests), tt.requests)
			}
			checkWhy(t, err, tt.why)
		})
	}
}

// checkWhy checks that err says why as Transient callers read it: why
// is ErrThrottled, ErrUnavailable or nil (not worth trying again).
func checkWhy(t *testing.T, err, why error) {
	t.Helper()
	for _, e := range []error{ErrThrottled, ErrUnavailable} {
		if got := errors.Is(err, e); got != (why == e) {
			t.Errorf("errors.Is(%v, %v) = %v", err, e, got)
		}
	}
	if Transient(err) != (why != nil) {
		t.Errorf("Transient(%v) = %v", err, Transient(err))
	}
}

func TestTextsPerRequest(t *testing.T) {
	if n := newBedrock(t, &titanServer{}, 256).TextsPerRequest(); n != 1 {
		t.Errorf("Titan takes %d texts per request, want 1", n)
	}
	if n := newOpenAI(t, &openAIServer{}, OpenAIOptions{}).TextsPerRequest(); n != openAIBatch {
		t.Errorf("OpenAI-compatible: %d texts per request, want %d", n, openAIBatch)
	}
}

func TestBedrockWrongDimensions(t *testing.T) {
	srv := &titanServer{fail: func(_ int, w http.ResponseWriter) bool {
		fmt.Fprint(w, `{"embedding":[0.1,0.2],"inputTextTokenCount":1}`)
		return true
	}}
	if _, err := newBedrock(t, srv, 256).Embed(context.Background(), []string{"x"}); err == nil {
		t.Error("a 2-dimensional answer was accepted for 256 dimensions")
	}
}

// ---- OpenAI-compatible ----

// openAIServer speaks POST /v1/embeddings. It answers data in reverse
// order (clients must use "index"). fail may answer a request instead.
type openAIServer struct {
	mu       sync.Mutex
	requests []openAIRequest
	auth     []string
	fail     func(n int, w http.ResponseWriter) bool
}

func (s *openAIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req openAIRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	n := len(s.requests)
	s.mu.Unlock()
	if s.fail != nil && s.fail(n, w) {
		return
	}
	dims := req.Dimensions
	if dims == 0 {
		dims = 8
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, len(req.Input))
	for i, text := range req.Input {
		data[len(req.Input)-1-i] = item{"embedding", i, vectorFor(text, dims)}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)}})
}

func newOpenAI(t *testing.T, srv http.Handler, o OpenAIOptions) *OpenAI {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	if o.URL == "" {
		o.URL = hs.URL + "/v1"
	}
	if o.Model == "" {
		o.Model = "nomic-embed-text"
	}
	o.Backoff = func(int) time.Duration { return time.Millisecond }
	e, err := NewOpenAI(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestOpenAIWireFormatAndBatching(t *testing.T) {
	srv := &openAIServer{}
	e := newOpenAI(t, srv, OpenAIOptions{Key: "sk-test", Dimensions: 16, Model: "text-embedding-3-small"})
	texts := make([]string, 70)
	for i := range texts {
		texts[i] = strings.Repeat("w", i+1)
	}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.requests) != 3 || len(srv.requests[0].Input) != 32 || len(srv.requests[2].Input) != 6 {
		t.Errorf("batches of %d requests, want 32+32+6 texts", len(srv.requests))
	}
	r := srv.requests[0]
	if r.Model != "text-embedding-3-small" || r.EncodingFormat != "float" || r.Dimensions != 16 || srv.auth[0] != "Bearer sk-test" {
		t.Errorf("request %+v auth %q", r, srv.auth[0])
	}
	for i, v := range vecs {
		if len(v) != 16 || v[1] != vectorFor(texts[i], 16)[1] {
			t.Fatalf("vector %d is not its text's (answers come in reverse order)", i)
		}
	}
	if e.Model() != "text-embedding-3-small/16" {
		t.Errorf("model %s", e.Model())
	}
}

func TestOpenAIURLForms(t *testing.T) {
	srv := &openAIServer{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	for _, u := range []string{hs.URL + "/v1", hs.URL + "/v1/", hs.URL + "/v1/embeddings"} {
		e, err := NewOpenAI(OpenAIOptions{URL: u, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
			t.Errorf("URL %s: %v", u, err)
		}
	}
	for _, bad := range []OpenAIOptions{{URL: "ftp://x/v1", Model: "m"}, {URL: "localhost:11434", Model: "m"}, {URL: "http://x/v1"}} {
		if _, err := NewOpenAI(bad); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
}

func TestOpenAIRetries(t *testing.T) {
	tests := []struct {
		name     string
		fail     func(n int, w http.ResponseWriter) bool
		requests int
		wantErr  string
		why      error // see checkWhy
	}{
		{"throttled then served, Retry-After honoured", func(n int, w http.ResponseWriter) bool {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprint(w, `{"error":{"message":"Rate limit reached","type":"requests"}}`)
				return true
			}
			return false
		}, 2, "", nil},
		{"server error then served", func(n int, w http.ResponseWriter) bool {
			if n <= 2 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return true
			}
			return false
		}, 3, "", nil},
		{"bad request is not retried", func(n int, w http.ResponseWriter) bool {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"model not found","type":"invalid_request_error"}}`)
			return true
		}, 1, "model not found", nil},
		{"unauthorized is not retried", func(n int, w http.ResponseWriter) bool {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided"}}`)
			return true
		}, 1, "Incorrect API key", nil},
		{"throttled every time gives up", func(n int, w http.ResponseWriter) bool {
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"Rate limit reached"}}`)
			return true
		}, openAIAttempts, "Rate limit reached", ErrThrottled},
		{"failing every time gives up", func(n int, w http.ResponseWriter) bool {
			w.WriteHeader(http.StatusBadGateway)
			return true
		}, openAIAttempts, "502", ErrUnavailable},
		{"wrong count is an error", func(n int, w http.ResponseWriter) bool {
			fmt.Fprint(w, `{"data":[]}`)
			return true
		}, 1, "0 vectors for 1 texts", nil},
		{"repeated index is an error", func(n int, w http.ResponseWriter) bool {
			fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`)
			return true
		}, 1, "2 vectors for 1 texts", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &openAIServer{fail: tt.fail}
			_, err := newOpenAI(t, srv, OpenAIOptions{}).Embed(context.Background(), []string{"a"})
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
			if len(srv.requests) != tt.requests {
				t.Errorf("%d requests, want %d", len(srv.requests), tt.requests)
			}
			if tt.wantErr != "" {
				checkWhy(t, err, tt.why)
			}
		})
	}
}

func TestOpenAIStopsWithTheContext(t *testing.T) {
	var n atomic.Int32
	srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusTooManyRequests)
	})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	e, _ := NewOpenAI(OpenAIOptions{URL: hs.URL + "/v1", Model: "m", Backoff: func(int) time.Duration { return time.Hour }})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := e.Embed(ctx, []string{"a"})
	if !errors.Is(err, context.DeadlineExceeded) || n.Load() != 1 {
		t.Errorf("error %v after %d requests, want the deadline after 1", err, n.Load())
	}
}
