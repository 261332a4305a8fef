package embedtest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/embedding"
)

// Titan stands in for Amazon Titan Text Embeddings V2 on Bedrock Runtime:
// InvokeModel (POST /model/amazon.titan-embed-text-v2:0/invoke) with the
// model's request and response bodies, its input limits and validation
// errors, a latency drawn from a distribution, and the account's
// on-demand quota, past which it answers ThrottlingException (HTTP 429)
// as Bedrock does. The sources of each figure are in docs/embedding.md.
//
// Its vectors are embedtest's feature-hashed bag of words at the asked
// dimensions, normalized when asked: texts sharing words point the same
// way, which is all the tests need of a model.
type Titan struct {
	URL       string       // the endpoint (AWS_ENDPOINT_URL_BEDROCK_RUNTIME)
	Requests  atomic.Int64 // requests answered with a vector
	Tokens    atomic.Int64 // their input tokens
	Throttled atomic.Int64 // requests refused for the quota
	Invalid   atomic.Int64 // requests refused as invalid (ValidationException)
	// Spent: the account's quota is spent by other callers, so every
	// request is throttled until it is cleared.
	Spent atomic.Bool

	o      TitanOptions
	mu     sync.Mutex
	reqs   bucket // the requests-per-minute quota
	tokens bucket // the tokens-per-minute quota
}

// Titan V2's input limits: 8,192 tokens or 50,000 characters, whichever
// comes first (docs.aws.amazon.com/bedrock/latest/userguide/titan-embedding-models.html).
const (
	TitanMaxTokens = 8192
	TitanMaxChars  = 50000
	// titanCharsPerToken is the documented average of English text, which
	// the stand-in counts tokens by (the model's tokenizer is not public).
	titanCharsPerToken = 4.7
)

// TitanOptions shape the stand-in.
type TitanOptions struct {
	// Quota is the account's on-demand quota (embedding.TitanDefaultQuota
	// unless an account asked for more; a zero rate is no bound).
	Quota embedding.Pace
	// LatencyMedian and LatencySpread draw each answer's latency from a
	// log-normal distribution of that median and σ (0: every answer takes
	// the median). TitanLatency is the published median.
	LatencyMedian time.Duration
	LatencySpread float64
}

// TitanLatency is the median latency of a Titan V2 InvokeModel and the
// spread of its log-normal distribution (see docs/embedding.md).
const (
	TitanLatency       = 50 * time.Millisecond
	TitanLatencySpread = 0.5
)

// StartTitan runs the stand-in until tb ends.
func StartTitan(tb testing.TB, o TitanOptions) *Titan {
	tb.Helper()
	t := NewTitan(o)
	hs := httptest.NewServer(t)
	tb.Cleanup(hs.Close)
	t.URL = hs.URL
	return t
}

// NewTitan returns a stand-in shaped by o, to serve with net/http.
func NewTitan(o TitanOptions) *Titan {
	now := time.Now()
	return &Titan{o: o, reqs: newBucket(o.Quota.RequestsPerMinute, 1, now),
		tokens: newBucket(o.Quota.TokensPerMinute, TitanMaxTokens, now)}
}

// Configure sets env, a function's environment, to embed with Titan V2 at
// dims dimensions through the stand-in, as deployed functions do.
func (t *Titan) Configure(env map[string]string, dims int) {
	env[embedding.Kind.Name()] = embedding.KindBedrock
	env[embedding.Dimensions.Name()] = fmt.Sprint(dims)
	env["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"] = t.URL
}

// Client returns the deployed Bedrock client pointed at the stand-in,
// its retries waiting a millisecond.
func (t *Titan) Client() *bedrockruntime.Client {
	return embedding.NewBedrockClient(aws.Config{Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")},
		func(o *bedrockruntime.Options) {
			o.BaseEndpoint = aws.String(t.URL)
			o.Retryer = retry.AddWithMaxBackoffDelay(o.Retryer, time.Millisecond)
		})
}

// titanRequest is the model's InvokeModel body; fields are pointers to
// tell a field left out from a zero.
type titanRequest struct {
	InputText      *string  `json:"inputText"`
	Dimensions     *int     `json:"dimensions"`
	Normalize      *bool    `json:"normalize"`
	EmbeddingTypes []string `json:"embeddingTypes"`
}

func (t *Titan) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	model, ok := strings.CutPrefix(r.URL.EscapedPath(), "/model/")
	model, ok2 := strings.CutSuffix(model, "/invoke")
	if model, _ = url.PathUnescape(model); r.Method != http.MethodPost || !ok || !ok2 {
		bedrockError(w, http.StatusNotFound, "UnknownOperationException", "")
		return
	}
	if model != embedding.TitanV2 {
		t.invalid(w, "The provided model identifier is invalid.")
		return
	}
	var req titanRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		t.invalid(w, "Malformed input request, please reformat your input and try again.")
		return
	}
	text, dims, msg := checkTitan(req)
	if msg != "" {
		t.invalid(w, msg)
		return
	}
	tokens := titanTokens(text)
	if tokens > TitanMaxTokens {
		t.invalid(w, fmt.Sprintf("400 Bad Request: Too many input tokens. Max input tokens: %d, request input token count: %d", TitanMaxTokens, tokens))
		return
	}
	if t.Spent.Load() || !t.admit(tokens) {
		t.Throttled.Add(1)
		bedrockError(w, http.StatusTooManyRequests, "ThrottlingException", "Too many requests, please wait before trying again.")
		return
	}
	select {
	case <-time.After(t.latency()):
	case <-r.Context().Done():
		return
	}
	t.Requests.Add(1)
	t.Tokens.Add(int64(tokens))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(titanAnswer(text, dims, req.Normalize == nil || *req.Normalize, tokens, req.EmbeddingTypes))
}

// checkTitan validates a request as the model does, returning its text,
// its dimensions and, when it is refused, why.
func checkTitan(req titanRequest) (string, int, string) {
	if req.InputText == nil || *req.InputText == "" {
		return "", 0, "Malformed input request: #: required key [inputText] not found, please reformat your input and try again."
	}
	dims := 1024 // the model's default
	if req.Dimensions != nil {
		dims = *req.Dimensions
	}
	if dims != 256 && dims != 512 && dims != 1024 {
		return "", 0, fmt.Sprintf("Malformed input request: #/dimensions: %d is not a valid enum value, please reformat your input and try again.", dims)
	}
	for _, typ := range req.EmbeddingTypes {
		if typ != "float" && typ != "binary" {
			return "", 0, fmt.Sprintf("Malformed input request: #/embeddingTypes: %s is not a valid enum value, please reformat your input and try again.", typ)
		}
	}
	if n := utf8.RuneCountInString(*req.InputText); n > TitanMaxChars {
		return "", 0, fmt.Sprintf("Malformed input request: expected maxLength: %d, actual: %d, please reformat your input and try again.", TitanMaxChars, n)
	}
	return *req.InputText, dims, ""
}

// titanTokens counts a text's tokens at the documented average.
func titanTokens(text string) int {
	return max(1, int(math.Ceil(float64(utf8.RuneCountInString(text))/titanCharsPerToken)))
}

// titanAnswer is the model's response body: "embedding" always holds the
// float vector; "embeddingsByType" the types asked for (float without).
func titanAnswer(text string, dims int, normalize bool, tokens int, types []string) map[string]any {
	v := hashVector(text, dims, nil)
	if normalize {
		var sum float64
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		for i := range v {
			v[i] = float32(float64(v[i]) / math.Sqrt(sum))
		}
	}
	byType := map[string]any{}
	if len(types) == 0 {
		types = []string{"float"}
	}
	for _, typ := range types {
		if typ == "binary" {
			bits := make([]int, dims)
			for i, x := range v {
				if x > 0 {
					bits[i] = 1
				}
			}
			byType["binary"] = bits
		} else {
			byType["float"] = v
		}
	}
	return map[string]any{"embedding": v, "inputTextTokenCount": tokens, "embeddingsByType": byType}
}

// hashVector is a text's feature-hashed bag of words (index terms, words
// mapped by synonyms first) in dims dimensions, never the zero vector.
func hashVector(text string, dims int, synonyms map[string]string) []float32 {
	v := make([]float32, dims)
	v[0] = 0.01
	for _, tok := range contextindex.Tokens(text) {
		if syn, ok := synonyms[tok]; ok {
			tok = syn
		}
		h := fnv.New32a()
		h.Write([]byte(tok))
		v[h.Sum32()%uint32(dims)]++
	}
	return v
}

// invalid answers a ValidationException.
func (t *Titan) invalid(w http.ResponseWriter, msg string) {
	t.Invalid.Add(1)
	bedrockError(w, http.StatusBadRequest, "ValidationException", msg)
}

// bedrockError writes an error as Bedrock Runtime (restJson1) does: the
// type in X-Amzn-ErrorType, the message in the body, which is what the
// AWS SDK for Go v2 decodes into a smithy.APIError.
func bedrockError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// latency draws an answer's latency.
func (t *Titan) latency() time.Duration {
	if t.o.LatencySpread <= 0 {
		return t.o.LatencyMedian
	}
	return time.Duration(float64(t.o.LatencyMedian) * math.Exp(t.o.LatencySpread*rand.NormFloat64()))
}

// admit takes a request of that many tokens from the quota, reporting
// false (and taking nothing) when either bucket is short.
func (t *Titan) admit(tokens int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	t.reqs.fill(now)
	t.tokens.fill(now)
	if !t.reqs.has(1) || !t.tokens.has(float64(tokens)) {
		return false
	}
	t.reqs.take(1)
	t.tokens.take(float64(tokens))
	return true
}

// bucket is a per-minute quota refilled continuously, holding a second's
// worth (or one request's most, for tokens): how AWS spreads a minute's
// quota within it is not published, and a second's burst is the stricter
// reading.
type bucket struct {
	perMinute, level, most float64
	filled                 time.Time
}

func newBucket(perMinute, least float64, now time.Time) bucket {
	most := max(perMinute/60, least)
	return bucket{perMinute: perMinute, level: most, most: most, filled: now}
}

func (b *bucket) fill(now time.Time) {
	b.level = min(b.level+now.Sub(b.filled).Minutes()*b.perMinute, b.most)
	b.filled = now
}

func (b *bucket) has(n float64) bool { return b.perMinute <= 0 || b.level >= n }
func (b *bucket) take(n float64)     { b.level -= n }
