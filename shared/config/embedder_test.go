package config

import (
	"strings"
	"testing"
)

func TestEmbedderSettings(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config // only the embedding fields are compared
		wantErr string
	}{
		{"local default is none", nil, Config{Embedder: "none"}, ""},
		{"Lambda default is Bedrock at 512 dimensions", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "f"},
			Config{Embedder: "bedrock", EmbedDimensions: 512}, ""},
		{"a URL means openai", map[string]string{"TOOLSHED_EMBED_URL": "http://localhost:11434/v1", "TOOLSHED_EMBED_MODEL": "nomic-embed-text"},
			Config{Embedder: "openai", EmbedURL: "http://localhost:11434/v1", EmbedModel: "nomic-embed-text"}, ""},
		{"explicit none wins in Lambda", map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "f", "TOOLSHED_EMBEDDER": "none"},
			Config{Embedder: "none"}, ""},
		{"openai with key and dimensions", map[string]string{"TOOLSHED_EMBEDDER": "openai", "TOOLSHED_EMBED_URL": "https://api.openai.com/v1",
			"TOOLSHED_EMBED_MODEL": "text-embedding-3-small", "TOOLSHED_EMBED_KEY": "sk-x", "TOOLSHED_EMBED_DIMENSIONS": "256"},
			Config{Embedder: "openai", EmbedURL: "https://api.openai.com/v1", EmbedModel: "text-embedding-3-small", EmbedKey: "sk-x", EmbedDimensions: 256}, ""},
		{"bedrock 1024", map[string]string{"TOOLSHED_EMBEDDER": "bedrock", "TOOLSHED_EMBED_DIMENSIONS": "1024"},
			Config{Embedder: "bedrock", EmbedDimensions: 1024}, ""},
		{"bedrock 300 is refused", map[string]string{"TOOLSHED_EMBEDDER": "bedrock", "TOOLSHED_EMBED_DIMENSIONS": "300"}, Config{}, "256, 512 or 1024"},
		{"openai without a model", map[string]string{"TOOLSHED_EMBEDDER": "openai", "TOOLSHED_EMBED_URL": "http://x/v1"}, Config{}, "TOOLSHED_EMBED_MODEL"},
		{"unknown embedder", map[string]string{"TOOLSHED_EMBEDDER": "magic"}, Config{}, "none, bedrock or openai"},
		{"bad dimensions", map[string]string{"TOOLSHED_EMBED_DIMENSIONS": "-1"}, Config{}, "TOOLSHED_EMBED_DIMENSIONS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := FromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			type embed struct {
				provider, url, model, key string
				dims                      int
			}
			got := embed{c.Embedder, c.EmbedURL, c.EmbedModel, c.EmbedKey, c.EmbedDimensions}
			want := embed{tt.want.Embedder, tt.want.EmbedURL, tt.want.EmbedModel, tt.want.EmbedKey, tt.want.EmbedDimensions}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}
