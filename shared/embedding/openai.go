package embedding

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
)

// OpenAI request limits.
const (
	// openAIBatch is how many texts go in one request (OpenAI accepts up
	// to 2,048; smaller batches keep local servers responsive).
	openAIBatch = 32
	// openAIAttempts bounds the attempts per request.
	openAIAttempts = 6
	// maxRetryAfter caps a server's Retry-After.
	maxRetryAfter = 30 * time.Second
	// maxAnswerBytes bounds an answer (32 texts × 3,072 dimensions as JSON
	// is about 2 MB).
	maxAnswerBytes = 64 << 20
)

// OpenAIOptions configure NewOpenAI.
type OpenAIOptions struct {
	// URL is the API base, e.g. https://api.openai.com/v1 or
	// http://localhost:11434/v1 (Ollama); requests go to URL/embeddings.
	// A URL that already ends in /embeddings is used as it is.
	URL        string
	Model      string
	Key        string // sent as a bearer token when set
	Dimensions int    // asked of the model when > 0 (text-embedding-3 models)
	// HTTPClient defaults to a client with a 60-second timeout.
	HTTPClient *http.Client
	// Backoff is the wait before retry n; defaults to Backoff(500ms, 8s).
	Backoff func(n int) time.Duration
}

// OpenAI embeds through an OpenAI-compatible /v1/embeddings endpoint.
type OpenAI struct {
	o        OpenAIOptions
	endpoint string
}

var _ contextindex.Embedder = (*OpenAI)(nil)

// NewOpenAI checks the options and returns the embedder.
func NewOpenAI(o OpenAIOptions) (*OpenAI, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s %q is not an http(s) URL", URL.Name(), o.URL)
	}
	if o.Model == "" {
		return nil, fmt.Errorf("%s is required for an OpenAI-compatible embedder", Model.Name())
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	if o.Backoff == nil {
		o.Backoff = Backoff(500*time.Millisecond, 8*time.Second)
	}
	endpoint := strings.TrimRight(o.URL, "/")
	if !strings.HasSuffix(endpoint, "/embeddings") {
		endpoint += "/embeddings"
	}
	return &OpenAI{o: o, endpoint: endpoint}, nil
}

// TextsPerRequest is how many texts one request carries (openAIBatch).
func (e *OpenAI) TextsPerRequest() int { return openAIBatch }

// Model implements contextindex.Embedder: the model, and "/<dimensions>"
// when dimensions are asked for.
func (e *OpenAI) Model() string {
	if e.o.Dimensions > 0 {
		return fmt.Sprintf("%s/%d", e.o.Model, e.o.Dimensions)
	}
	return e.o.Model
}

type openAIRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type openAIResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

type openAIError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// Embed implements contextindex.Embedder, openAIBatch texts per request.
func (e *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += openAIBatch {
		part := texts[start:min(start+openAIBatch, len(texts))]
		vecs, err := e.batch(ctx, part)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// batch embeds one request's texts, retrying throttling (429) and server
// errors (5xx, connection failures) with backoff, honouring Retry-After.
func (e *OpenAI) batch(ctx context.Context, texts []string) ([][]float32, error) {
	body, _ := json.Marshal(openAIRequest{Model: e.o.Model, Input: texts, EncodingFormat: "float", Dimensions: e.o.Dimensions})
	var lastErr error
	for attempt := 1; attempt <= openAIAttempts; attempt++ {
		vecs, wait, err := e.post(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		lastErr = err
		if wait < 0 || attempt == openAIAttempts {
			break
		}
		if wait == 0 {
			wait = e.o.Backoff(attempt)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (then: %w)", lastErr, ctx.Err())
		case <-time.After(wait):
		}
	}
	return nil, lastErr
}

// post makes one request. wait says what to do on failure: -1 do not
// retry, 0 retry after the usual backoff, more: retry after that long.
func (e *OpenAI) post(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, -1, fmt.Errorf("embeddings request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.o.Key != "" {
		req.Header.Set("Authorization", "Bearer "+e.o.Key)
	}
	res, err := e.o.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, -1, fmt.Errorf("embeddings %s: %w", e.endpoint, ctx.Err())
		}
		return nil, 0, fmt.Errorf("embeddings %s: %w: %w", e.endpoint, ErrUnavailable, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("embeddings %s: read the answer: %w: %w", e.endpoint, ErrUnavailable, err)
	}
	if len(raw) > maxAnswerBytes {
		return nil, -1, fmt.Errorf("embeddings %s: answer larger than %d bytes", e.endpoint, maxAnswerBytes)
	}
	if res.StatusCode != http.StatusOK {
		err := fmt.Errorf("embeddings %s: %s: %s", e.endpoint, res.Status, errorMessage(raw))
		switch {
		case res.StatusCode == http.StatusTooManyRequests:
			return nil, retryAfter(res.Header.Get("Retry-After")), fmt.Errorf("%w: %w", ErrThrottled, err)
		case res.StatusCode >= 500:
			return nil, 0, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return nil, -1, err
	}
	var r openAIResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, -1, fmt.Errorf("embeddings %s: decode the answer: %w", e.endpoint, err)
	}
	if len(r.Data) != n {
		return nil, -1, fmt.Errorf("embeddings %s: %d vectors for %d texts", e.endpoint, len(r.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil || len(d.Embedding) == 0 {
			return nil, -1, fmt.Errorf("embeddings %s: bad or repeated index %d", e.endpoint, d.Index)
		}
		out[d.Index] = d.Embedding
	}
	return out, 0, nil
}

// errorMessage extracts an OpenAI error's message, or a short prefix of
// whatever the server said.
func errorMessage(raw []byte) string {
	var e openAIError
	if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(raw))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// retryAfter reads a Retry-After of seconds (0 when absent or a date),
// capped at maxRetryAfter.
func retryAfter(v string) time.Duration {
	s, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || s <= 0 {
		return 0
	}
	return min(time.Duration(s)*time.Second, maxRetryAfter)
}
