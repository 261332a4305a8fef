package embedding

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/settings"
)

// Embedders, the values of TOOLSHED_EMBEDDER.
const (
	KindNone    = "none"
	KindBedrock = "bedrock"
	KindOpenAI  = "openai"
)

// DefaultTitanDimensions is the Bedrock vector size unless
// TOOLSHED_EMBED_DIMENSIONS says otherwise.
const DefaultTitanDimensions = 512

// The embedding settings, read by context_search and the indexer alike so
// that the vectors an index holds match the queries'.
var (
	Kind = settings.New("TOOLSHED_EMBEDDER", "",
		"context_search embeddings: `none` (lexical), `bedrock` (Titan Text Embeddings V2), `openai` (any OpenAI-compatible endpoint)",
		kind).Shown("`none` (Lambda: `bedrock`; `openai` when `TOOLSHED_EMBED_URL` is set)")
	URL = settings.New("TOOLSHED_EMBED_URL", "",
		"OpenAI-compatible API base: `https://api.openai.com/v1`, `http://localhost:11434/v1` (Ollama), `http://localhost:1234/v1` (LM Studio), a vLLM server",
		settings.Text)
	Model = settings.New("TOOLSHED_EMBED_MODEL", "",
		"the embedding model of that endpoint, e.g. `text-embedding-3-small`, `nomic-embed-text` (required with `openai`)",
		settings.Text)
	Key = settings.New("TOOLSHED_EMBED_KEY", "",
		"its API key, sent as a bearer token", settings.Text).Secret()
	Dimensions = settings.New("TOOLSHED_EMBED_DIMENSIONS", "",
		"vector size: 256, 512 or 1024 for Titan; asked of OpenAI models that take `dimensions`",
		dimensions).Shown("Bedrock: `512`")
	RequestsPerMinute = settings.New("TOOLSHED_EMBED_REQUESTS_PER_MINUTE", "",
		"the most embedding requests one process sends a minute, its share of the provider's quota; `0` for no bound",
		perMinute).Shown(fmt.Sprintf("Bedrock: 90%% of the assumed default quota over `TOOLSHED_EMBED_WORKERS` (`%g` over %d); else no bound",
		TitanDefaultQuota.RequestsPerMinute*PaceHeadroom/IndexWorkers, IndexWorkers))
	TokensPerMinute = settings.New("TOOLSHED_EMBED_TOKENS_PER_MINUTE", "",
		"the most input tokens one process sends to be embedded a minute, its share of the provider's quota; `0` for no bound",
		perMinute).Shown(fmt.Sprintf("Bedrock: likewise (`%g` over %d); else no bound", TitanDefaultQuota.TokensPerMinute*PaceHeadroom/IndexWorkers, IndexWorkers))
	Workers = settings.New("TOOLSHED_EMBED_WORKERS", strconv.Itoa(IndexWorkers),
		"how many processes embed at once, sharing the provider's quota: deployed, the embed queue's share of the index worker's reserved concurrency, which the deployment sets",
		settings.Positive)
)

// IndexWorkers is how many index worker environments embed at once as
// deployed: the embed queue's share of the index worker's reserved
// concurrency (shared/deploy's EmbedConcurrency) and so, unless the
// deployment reserves another number (it then sets Workers), how many
// processes share the embedding quota.
const IndexWorkers = 10

// Settings are the embedding settings, for the families and functions
// that read them.
// Workers is not among them: the deployment derives it from the index
// worker's reserved concurrency.
var Settings = []settings.Setting{Kind, URL, Model, Key, Dimensions, RequestsPerMinute, TokensPerMinute}

// Choice is the configured embedder.
type Choice struct {
	Kind       string // KindNone, KindBedrock or KindOpenAI
	URL, Model string // OpenAI
	Key        string // OpenAI
	Dimensions int    // 0: the model's own (OpenAI)
	Pace       Pace   // Bedrock: the process's share of the quota
	Workers    int    // processes sharing the quota (Workers)
}

// Chosen reads the embedding settings with getenv. Without
// TOOLSHED_EMBEDDER the embedder is openai when TOOLSHED_EMBED_URL is set,
// bedrock in Lambda, and none otherwise.
func Chosen(getenv func(string) string) (Choice, error) {
	r := settings.NewReader(getenv)
	c := Choice{
		Kind:       settings.Read(r, Kind),
		URL:        settings.Read(r, URL),
		Model:      settings.Read(r, Model),
		Key:        settings.Read(r, Key),
		Dimensions: settings.Read(r, Dimensions),
		Workers:    settings.Read(r, Workers),
	}
	rpm, tpm := settings.Read(r, RequestsPerMinute), settings.Read(r, TokensPerMinute)
	if err := r.Err(); err != nil {
		return Choice{}, err
	}
	c.Pace = Pace{RequestsPerMinute: rpm, TokensPerMinute: tpm}
	if c.Kind == "" {
		switch {
		case c.URL != "":
			c.Kind = KindOpenAI
		case config.InLambda(getenv):
			c.Kind = KindBedrock
		default:
			c.Kind = KindNone
		}
	}
	return c, c.check()
}

func (c *Choice) check() error {
	c.Pace = c.pace()
	switch c.Kind {
	case KindBedrock:
		if c.Dimensions == 0 {
			c.Dimensions = DefaultTitanDimensions
		}
		if c.Dimensions != 256 && c.Dimensions != 512 && c.Dimensions != 1024 {
			return fmt.Errorf("%s=%d: Titan Text Embeddings V2 makes 256, 512 or 1024", Dimensions.Name(), c.Dimensions)
		}
	case KindOpenAI:
		if c.URL == "" || c.Model == "" {
			return fmt.Errorf("%s=%s needs %s (e.g. http://localhost:11434/v1) and %s", Kind.Name(), KindOpenAI, URL.Name(), Model.Name())
		}
	}
	return nil
}

// pace is the chosen pace, a rate left unset (-1) being Bedrock's share
// of its default quota (less PaceHeadroom, split over the processes that
// embed at once), and no bound for the others.
func (c *Choice) pace() Pace {
	p := c.Pace
	if c.Kind != KindBedrock {
		return Pace{RequestsPerMinute: max(p.RequestsPerMinute, 0), TokensPerMinute: max(p.TokensPerMinute, 0)}
	}
	if p.RequestsPerMinute < 0 {
		p.RequestsPerMinute = TitanDefaultQuota.RequestsPerMinute * PaceHeadroom / float64(c.Workers)
	}
	if p.TokensPerMinute < 0 {
		p.TokensPerMinute = TitanDefaultQuota.TokensPerMinute * PaceHeadroom / float64(c.Workers)
	}
	return p
}

// FromEnv returns the embedder the settings choose (see Chosen), or nil
// for none. awsConfig loads the AWS configuration (only asked for
// Bedrock).
func FromEnv(ctx context.Context, getenv func(string) string, awsConfig func(context.Context) (aws.Config, error)) (contextindex.Embedder, error) {
	c, err := Chosen(getenv)
	if err != nil {
		return nil, err
	}
	return c.Open(ctx, awsConfig)
}

// Open returns the chosen embedder, or nil for none.
func (c Choice) Open(ctx context.Context, awsConfig func(context.Context) (aws.Config, error)) (contextindex.Embedder, error) {
	switch c.Kind {
	case KindNone:
		return nil, nil
	case KindBedrock:
		ac, err := awsConfig(ctx)
		if err != nil {
			return nil, err
		}
		return NewBedrock(NewBedrockClient(ac), c.Dimensions, c.Pace), nil
	case KindOpenAI:
		return NewOpenAI(OpenAIOptions{URL: c.URL, Model: c.Model, Key: c.Key, Dimensions: c.Dimensions})
	}
	return nil, fmt.Errorf("unknown embedder %q", c.Kind)
}

func kind(s string) (string, error) {
	switch s {
	case "", KindNone, KindBedrock, KindOpenAI:
		return s, nil
	}
	return "", fmt.Errorf("use none, bedrock or openai")
}

// perMinute parses a rate per minute; unset is -1, the embedder's
// default.
func perMinute(s string) (float64, error) {
	if s == "" {
		return -1, nil
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, fmt.Errorf("use a number per minute, 0 or more")
	}
	return n, nil
}

func dimensions(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 8192 {
		return 0, fmt.Errorf("use a number of dimensions from 1 to 8192")
	}
	return n, nil
}
