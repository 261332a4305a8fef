// Package embedtest runs an OpenAI-compatible embeddings server for tests:
// POST /v1/embeddings answered with feature-hashed bag-of-words vectors,
// so texts that share words point the same way. It stands in for a model
// (none ships with the repository) while the real client talks to it.
package embedtest

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/embedding"
)

// dims is the size of the server's vectors.
const dims = 64

// Server is the running server.
type Server struct {
	URL   string       // the API base, …/v1
	Texts atomic.Int64 // texts embedded so far
	Fail  atomic.Bool  // answer every request with a 500
}

// Start runs a server until tb ends and returns it with an OpenAI
// embedder (the real adapter) pointed at it.
func Start(tb testing.TB) (*Server, contextindex.Embedder) {
	tb.Helper()
	s := &Server{}
	hs := httptest.NewServer(s)
	tb.Cleanup(hs.Close)
	s.URL = hs.URL + "/v1"
	emb, err := embedding.NewOpenAI(embedding.OpenAIOptions{URL: s.URL, Model: "feature-hash",
		Backoff: func(int) time.Duration { return time.Millisecond }})
	if err != nil {
		tb.Fatal(err)
	}
	return s, emb
}

// vector is the server's vector for a text.
func vector(text string) []float32 {
	v := make([]float32, dims)
	v[0] = 0.01 // never the zero vector
	for _, tok := range contextindex.Tokens(text) {
		h := fnv.New32a()
		h.Write([]byte(tok))
		v[h.Sum32()%dims]++
	}
	return v
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
	s.Texts.Add(int64(len(req.Input)))
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, len(req.Input))
	for i, text := range req.Input {
		data[i] = item{"embedding", i, vector(text)}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "feature-hash"})
}
