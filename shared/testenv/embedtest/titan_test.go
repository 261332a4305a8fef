package embedtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"github.com/toolshed/toolshed/shared/embedding"
)

// invoke calls InvokeModel with the real SDK client.
func invoke(t *testing.T, c *bedrockruntime.Client, model, body string) (map[string]any, error) {
	t.Helper()
	res, err := c.InvokeModel(context.Background(), &bedrockruntime.InvokeModelInput{ModelId: aws.String(model),
		ContentType: aws.String("application/json"), Accept: aws.String("application/json"), Body: []byte(body)})
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(res.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

// TestTitanWireFormat: the stand-in answers the real SDK as Titan V2
// does, and refuses what Titan refuses with a ValidationException the SDK
// decodes.
func TestTitanWireFormat(t *testing.T) {
	ti := StartTitan(t, TitanOptions{})
	c := ti.Client()
	out, err := invoke(t, c, embedding.TitanV2, `{"inputText":"retry with backoff","dimensions":256,"normalize":true,"embeddingTypes":["float","binary"]}`)
	if err != nil {
		t.Fatal(err)
	}
	vec, _ := out["embedding"].([]any)
	byType, _ := out["embeddingsByType"].(map[string]any)
	floats, _ := byType["float"].([]any)
	bits, _ := byType["binary"].([]any)
	if len(vec) != 256 || len(floats) != 256 || len(bits) != 256 || out["inputTextTokenCount"] != float64(4) {
		t.Errorf("answer: %d dimensions, by type %d float, %d binary, %v tokens", len(vec), len(floats), len(bits), out["inputTextTokenCount"])
	}
	var norm float64
	for _, x := range vec {
		norm += x.(float64) * x.(float64)
	}
	if math.Abs(norm-1) > 1e-4 {
		t.Errorf("normalized vector of norm² %v", norm)
	}
	out, err = invoke(t, c, embedding.TitanV2, `{"inputText":"defaults"}`)
	if vec, _ := out["embedding"].([]any); err != nil || len(vec) != 1024 {
		t.Errorf("without dimensions: %d dimensions (want the default 1024), %v", len(vec), err)
	}

	refused := []struct{ name, model, body, msg string }{
		{"no inputText", embedding.TitanV2, `{"dimensions":256}`, "required key [inputText]"},
		{"empty inputText", embedding.TitanV2, `{"inputText":""}`, "required key [inputText]"},
		{"300 dimensions", embedding.TitanV2, `{"inputText":"x","dimensions":300}`, "300 is not a valid enum value"},
		{"unknown embedding type", embedding.TitanV2, `{"inputText":"x","embeddingTypes":["int8"]}`, "int8 is not a valid enum value"},
		{"unknown field", embedding.TitanV2, `{"inputText":"x","texts":["y"]}`, "Malformed input request"},
		{"over 50,000 characters", embedding.TitanV2, fmt.Sprintf(`{"inputText":%q}`, strings.Repeat("a", TitanMaxChars+1)), "expected maxLength: 50000, actual: 50001"},
		{"over 8,192 tokens", embedding.TitanV2, fmt.Sprintf(`{"inputText":%q}`, strings.Repeat("ab ", 13000)), "Too many input tokens. Max input tokens: 8192"},
		{"another model", "amazon.titan-embed-text-v1", `{"inputText":"x"}`, "model identifier is invalid"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, err := invoke(t, c, tt.model, tt.body)
			var ve *types.ValidationException
			if !errors.As(err, &ve) || !strings.Contains(ve.ErrorMessage(), tt.msg) {
				t.Errorf("error %v, want a ValidationException saying %q", err, tt.msg)
			}
		})
	}
	if ti.Invalid.Load() != int64(len(refused)) || ti.Requests.Load() != 2 {
		t.Errorf("%d refused, %d answered", ti.Invalid.Load(), ti.Requests.Load())
	}
}

// TestTitanQuota: past its quota the stand-in answers ThrottlingException
// (HTTP 429), which the SDK decodes as such, for requests and for tokens.
func TestTitanQuota(t *testing.T) {
	tests := []struct {
		name  string
		quota embedding.Pace
		text  string
		spent bool
		want  int // requests throttled of 5; -1: some
	}{
		{"requests per minute", embedding.Pace{RequestsPerMinute: 60}, "short", false, -1},
		// A request may be as large as the model takes, so the tokens'
		// bucket holds 8,192 at least: 5 × 1,703 is more.
		{"tokens per minute", embedding.Pace{TokensPerMinute: 60}, strings.Repeat("word ", 1600), false, -1},
		{"spent by others", embedding.Pace{}, "short", true, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ti := StartTitan(t, TitanOptions{Quota: tt.quota})
			ti.Spent.Store(tt.spent)
			// Without the client's retries, to see each answer.
			c := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(ti.URL),
				Credentials: ti.Client().Options().Credentials, RetryMaxAttempts: 1})
			var throttled int
			for range 5 {
				_, err := invoke(t, c, embedding.TitanV2, fmt.Sprintf(`{"inputText":%q}`, tt.text))
				var te *types.ThrottlingException
				var ae smithy.APIError
				switch {
				case errors.As(err, &te) && errors.As(err, &ae) && ae.ErrorCode() == "ThrottlingException":
					throttled++
				case err != nil:
					t.Fatal(err)
				}
			}
			if throttled == 0 || tt.want >= 0 && throttled != tt.want || ti.Throttled.Load() != int64(throttled) {
				t.Errorf("%d of 5 requests throttled (stand-in counted %d)", throttled, ti.Throttled.Load())
			}
		})
	}
}

// TestBedrockPacedWithinQuota: the deployed adapter, paced below the
// quota (as deployed: embedding.PaceHeadroom), embeds every text with no
// request throttled; unpaced, the same work is
// throttled and retried, and still every text gets its vector.
func TestBedrockPacedWithinQuota(t *testing.T) {
	quota := embedding.Pace{RequestsPerMinute: 1200, TokensPerMinute: 12000}
	texts := make([]string, 40)
	for i := range texts {
		texts[i] = fmt.Sprintf("chunk number %d of the tree", i)
	}
	for _, tt := range []struct {
		name      string
		pace      embedding.Pace
		throttled bool
	}{{"paced", embedding.Pace{RequestsPerMinute: quota.RequestsPerMinute * embedding.PaceHeadroom,
		TokensPerMinute: quota.TokensPerMinute * embedding.PaceHeadroom}, false}, {"unpaced", embedding.Pace{}, true}} {
		t.Run(tt.name, func(t *testing.T) {
			ti := StartTitan(t, TitanOptions{Quota: quota})
			b := embedding.NewBedrock(ti.Client(), 256, tt.pace)
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for w := range 4 {
				wg.Go(func() {
					for i := w; i < len(texts); i += 4 {
						if _, err := b.Embed(context.Background(), texts[i:i+1]); err != nil && errs[w] == nil {
							errs[w] = err
						}
					}
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil && !embedding.Transient(err) {
				t.Fatal(err)
			}
			if got := ti.Throttled.Load() > 0; got != tt.throttled {
				t.Errorf("%d requests throttled", ti.Throttled.Load())
			}
			if !tt.throttled && (ti.Requests.Load() != int64(len(texts)) || b.Tokens() != ti.Tokens.Load()) {
				t.Errorf("%d requests answered for %d texts; %d tokens counted, the stand-in counted %d",
					ti.Requests.Load(), len(texts), b.Tokens(), ti.Tokens.Load())
			}
		})
	}
}
