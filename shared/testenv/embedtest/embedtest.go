// Package embedtest runs an OpenAI-compatible embeddings server for tests:
// POST /v1/embeddings answered with feature-hashed bag-of-words vectors,
// so texts that share words point the same way. It stands in for a model
// (none ships with the repository) while the real client talks to it, and
// for a provider's limits: each request can take a while to answer, and
// requests beyond a quota are refused with 429, as a provider throttles.
package embedtest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/embedding"
)

// dims is the size of the server's vectors.
const dims = 64

// Model is the model name the server's embedder asks for.
const Model = "feature-hash"

// Options shape the server's answers.
type Options struct {
	// Latency is how long each request takes to answer.
	Latency time.Duration
	// RequestsPerSecond is the quota: a request beyond it (a bucket of a
	// second's requests, refilled as time passes) is answered 429 without
	// Retry-After, as Bedrock throttles; 0 for no quota.
	RequestsPerSecond float64
	// Refuse: a request with a text containing it is answered 400.
	Refuse string
	// Synonyms map words to others before they are hashed, so that texts
	// in different words point the same way, as a model's vectors do
	// ("backoff" → "pause"); both sides are read as index terms
	// (contextindex.Tokens: lower-cased and stemmed).
	Synonyms map[string]string
}

// Server is the running server.
type Server struct {
	URL       string       // the API base, …/v1
	Texts     atomic.Int64 // texts embedded so far
	Requests  atomic.Int64 // requests answered with vectors
	Throttled atomic.Int64 // requests refused for the quota
	Fail      atomic.Bool  // answer every request with a 500

	o        Options
	mu       sync.Mutex
	tokens   float64           // requests the quota allows now
	filled   time.Time         // when tokens was last refilled
	synonyms map[string]string // o.Synonyms as index terms
}

// Start runs a server without latency or quota until tb ends and returns
// it with an OpenAI embedder (the real adapter) pointed at it.
func Start(tb testing.TB) (*Server, contextindex.Embedder) {
	return StartWith(tb, Options{})
}

// StartWith runs a server shaped by o until tb ends and returns it with
// an OpenAI embedder (the real adapter, retrying at once) pointed at it.
func StartWith(tb testing.TB, o Options) (*Server, contextindex.Embedder) {
	tb.Helper()
	s := NewServer(o)
	hs := httptest.NewServer(s)
	tb.Cleanup(hs.Close)
	s.URL = hs.URL + "/v1"
	emb, err := embedding.NewOpenAI(embedding.OpenAIOptions{URL: s.URL, Model: Model,
		Backoff: func(int) time.Duration { return time.Millisecond }})
	if err != nil {
		tb.Fatal(err)
	}
	return s, emb
}

// NewServer returns a server shaped by o, to serve with net/http (Start
// runs one in the test's process, StartProcess in a process of its own).
func NewServer(o Options) *Server {
	s := &Server{o: o, tokens: o.RequestsPerSecond, filled: time.Now(), synonyms: map[string]string{}}
	for from, to := range o.Synonyms {
		if f, t := contextindex.Tokens(from), contextindex.Tokens(to); len(f) == 1 && len(t) == 1 {
			s.synonyms[f[0]] = t[0]
		}
	}
	return s
}

// Configure sets env, a function's environment, to embed with s as a
// deployment with an OpenAI-compatible embedding server does.
func (s *Server) Configure(env map[string]string) {
	env[embedding.Kind.Name()] = embedding.KindOpenAI
	env[embedding.URL.Name()] = s.URL
	env[embedding.Model.Name()] = Model
}

// vector is the server's vector for a text.
func (s *Server) vector(text string) []float32 { return hashVector(text, dims, s.synonyms) }

// admit takes a request from the quota, reporting false when it is spent.
func (s *Server) admit() bool {
	if s.o.RequestsPerSecond <= 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.tokens = min(s.tokens+now.Sub(s.filled).Seconds()*s.o.RequestsPerSecond, max(s.o.RequestsPerSecond, 1))
	s.filled = now
	if s.tokens < 1 {
		return false
	}
	s.tokens--
	return true
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input []string `json:"input"`
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	if s.Fail.Load() {
		http.Error(w, `{"error":{"message":"model overloaded"}}`, http.StatusInternalServerError)
		return
	}
	if !s.admit() {
		s.Throttled.Add(1)
		http.Error(w, `{"error":{"message":"Rate limit reached for requests"}}`, http.StatusTooManyRequests)
		return
	}
	select {
	case <-time.After(s.o.Latency):
	case <-r.Context().Done():
		return
	}
	for _, text := range req.Input {
		if s.o.Refuse != "" && strings.Contains(text, s.o.Refuse) {
			http.Error(w, `{"error":{"message":"input refused"}}`, http.StatusBadRequest)
			return
		}
	}
	s.Requests.Add(1)
	s.Texts.Add(int64(len(req.Input)))
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, len(req.Input))
	for i, text := range req.Input {
		data[i] = item{"embedding", i, s.vector(text)}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": Model})
}

// StartProcess builds scripts/embedserver and runs it as a process of its
// own with o's synonyms until tb ends, and returns its API base (for
// TOOLSHED_EMBED_URL): the embedder is then configured and reached as a
// deployment reaches a model server.
func StartProcess(tb testing.TB, o Options) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "embedserver")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/toolshed/toolshed/scripts/embedserver").CombinedOutput(); err != nil {
		tb.Fatalf("build embedserver: %v\n%s", err, out)
	}
	var pairs []string
	for from, to := range o.Synonyms {
		pairs = append(pairs, from+"="+to)
	}
	cmd := exec.Command(bin, "-synonyms", strings.Join(pairs, ","))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		tb.Fatalf("embedserver: no address: %v", err)
	}
	return strings.TrimSpace(line)
}
