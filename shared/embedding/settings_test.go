package embedding

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func TestChosen(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Choice
		wantErr string
	}{
		{"local default is none", nil, Choice{Kind: "none", Workers: 10}, ""},
		{"Lambda default is Bedrock at 512 dimensions", map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001"},
			Choice{Kind: "bedrock", Dimensions: 512, Pace: Pace{180, 27000}, Workers: 10}, ""},
		{"a URL means openai", map[string]string{"TOOLSHED_EMBED_URL": "http://localhost:11434/v1", "TOOLSHED_EMBED_MODEL": "nomic-embed-text"},
			Choice{Kind: "openai", URL: "http://localhost:11434/v1", Model: "nomic-embed-text", Workers: 10}, ""},
		{"explicit none wins in Lambda", map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001", "TOOLSHED_EMBEDDER": "none"},
			Choice{Kind: "none", Workers: 10}, ""},
		{"openai with key and dimensions", map[string]string{"TOOLSHED_EMBEDDER": "openai", "TOOLSHED_EMBED_URL": "https://api.openai.com/v1",
			"TOOLSHED_EMBED_MODEL": "text-embedding-3-small", "TOOLSHED_EMBED_KEY": "sk-x", "TOOLSHED_EMBED_DIMENSIONS": "256"},
			Choice{Kind: "openai", URL: "https://api.openai.com/v1", Model: "text-embedding-3-small", Key: "sk-x", Dimensions: 256, Workers: 10}, ""},
		{"bedrock 1024", map[string]string{"TOOLSHED_EMBEDDER": "bedrock", "TOOLSHED_EMBED_DIMENSIONS": "1024"},
			Choice{Kind: "bedrock", Dimensions: 1024, Pace: Pace{180, 27000}, Workers: 10}, ""},
		// The default share follows the processes that share the quota
		// (the deployment sets it from the index worker's concurrency).
		{"bedrock shared by 20 workers", map[string]string{"TOOLSHED_EMBEDDER": "bedrock", "TOOLSHED_EMBED_WORKERS": "20"},
			Choice{Kind: "bedrock", Dimensions: 512, Pace: Pace{90, 13500}, Workers: 20}, ""},
		{"no workers is refused", map[string]string{"TOOLSHED_EMBED_WORKERS": "0"}, Choice{}, "TOOLSHED_EMBED_WORKERS"},
		{"bedrock paced as told", map[string]string{"TOOLSHED_EMBEDDER": "bedrock", "TOOLSHED_EMBED_REQUESTS_PER_MINUTE": "60", "TOOLSHED_EMBED_TOKENS_PER_MINUTE": "0"},
			Choice{Kind: "bedrock", Dimensions: 512, Pace: Pace{60, 0}, Workers: 10}, ""},
		{"a negative pace is refused", map[string]string{"TOOLSHED_EMBED_TOKENS_PER_MINUTE": "-5"}, Choice{}, "TOOLSHED_EMBED_TOKENS_PER_MINUTE"},
		{"bedrock 300 is refused", map[string]string{"TOOLSHED_EMBEDDER": "bedrock", "TOOLSHED_EMBED_DIMENSIONS": "300"}, Choice{}, "256, 512 or 1024"},
		{"openai without a model", map[string]string{"TOOLSHED_EMBEDDER": "openai", "TOOLSHED_EMBED_URL": "http://x/v1"}, Choice{}, "TOOLSHED_EMBED_MODEL"},
		{"unknown embedder", map[string]string{"TOOLSHED_EMBEDDER": "magic"}, Choice{}, "none, bedrock or openai"},
		{"bad dimensions", map[string]string{"TOOLSHED_EMBED_DIMENSIONS": "-1"}, Choice{}, "TOOLSHED_EMBED_DIMENSIONS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Chosen(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c != tt.want {
				t.Errorf("got %+v, want %+v", c, tt.want)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	noAWS := func(context.Context) (aws.Config, error) { return aws.Config{}, errors.New("no AWS here") }
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		getenv func(string) string
		model  string
	}{
		{env(), ""},
		{env("TOOLSHED_EMBEDDER", "none"), ""},
		{env("TOOLSHED_EMBEDDER", "openai", "TOOLSHED_EMBED_URL", "http://127.0.0.1:1/v1", "TOOLSHED_EMBED_MODEL", "m", "TOOLSHED_EMBED_DIMENSIONS", "64"), "m/64"},
	}
	for i, tt := range tests {
		e, err := FromEnv(context.Background(), tt.getenv, noAWS)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if (e == nil) != (tt.model == "") || e != nil && e.Model() != tt.model {
			t.Errorf("case %d: got %v", i, e)
		}
	}
	if _, err := FromEnv(context.Background(), env("TOOLSHED_EMBEDDER", "bedrock"), noAWS); err == nil {
		t.Error("bedrock without AWS configuration: no error")
	}
	b, err := FromEnv(context.Background(), env("TOOLSHED_EMBEDDER", "bedrock", "TOOLSHED_EMBED_DIMENSIONS", "1024"),
		func(context.Context) (aws.Config, error) { return aws.Config{Region: "eu-west-1"}, nil })
	if err != nil || b.Model() != "amazon.titan-embed-text-v2:0/1024" {
		t.Errorf("bedrock: %v, %v", b, err)
	}
}
