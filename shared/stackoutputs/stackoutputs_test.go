package stackoutputs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/stackoutputs"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// TestRead reads the outputs of a stack that moto_server's CloudFormation
// created.
func TestRead(t *testing.T) {
	moto := emulator.StartMoto(t)
	moto.CreateStack(t, "Toolshed", map[string]string{
		stackoutputs.Bucket:                     "toolshed-snapshots-1",
		stackoutputs.Table(config.APIKeysTable): "Toolshed-ApiKeysTable-1",
	})
	client := moto.CloudFormation()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	out, err := stackoutputs.Read(ctx, client, "Toolshed")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := out.Get(stackoutputs.Bucket); err != nil || got != "toolshed-snapshots-1" {
		t.Errorf("bucket %q, %v", got, err)
	}
	if got, err := out.Get("ApiKeysTable"); err != nil || got != "Toolshed-ApiKeysTable-1" {
		t.Errorf("API keys table %q, %v", got, err)
	}
	if _, err := out.Get(stackoutputs.AlarmTopic); err == nil || !strings.Contains(err.Error(), "stack Toolshed has no output AlarmTopicArn (it has ApiKeysTable, SnapshotBucket)") {
		t.Errorf("a missing output: %v", err)
	}
	if _, err := stackoutputs.Read(ctx, client, "NoSuchStack"); err == nil || !strings.Contains(err.Error(), "stack NoSuchStack") {
		t.Errorf("a missing stack: %v", err)
	}
}

// TestConfig: with a stack's name, the configuration points at its
// DynamoDB tables and bucket, read from its outputs through the AWS
// settings of the environment; without one, it is the environment's.
func TestConfig(t *testing.T) {
	moto := emulator.StartMoto(t)
	outputs := map[string]string{stackoutputs.Bucket: "the-bucket"}
	for table := range config.TableSettings {
		outputs[stackoutputs.Table(table)] = "Toolshed-" + string(table)
	}
	moto.CreateStack(t, "Toolshed", outputs)
	moto.CreateStack(t, "Old", map[string]string{stackoutputs.APIURL: "https://old.example/"})
	t.Setenv("AWS_ENDPOINT_URL_CLOUDFORMATION", moto.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", "dummy")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "dummy")
	t.Setenv("AWS_REGION", "us-east-1")
	env := map[string]string{"TOOLSHED_STORE": "bolt", "TOOLSHED_APIKEYS_TABLE": "local-keys", "TOOLSHED_LOG_LEVEL": "debug"}
	getenv := func(k string) string { return env[k] }

	cfg, err := stackoutputs.Config(t.Context(), "Toolshed", getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Tables{Tasks: "Toolshed-Tasks", Memory: "Toolshed-Memory", RateLimits: "Toolshed-RateLimits",
		Access: "Toolshed-Access", APIKeys: "Toolshed-ApiKeys"}
	if cfg.Store != "dynamodb" || cfg.Tables != want || cfg.Bucket != "the-bucket" || cfg.LogLevel.String() != "DEBUG" {
		t.Errorf("got store %s, tables %+v, bucket %s, log level %s", cfg.Store, cfg.Tables, cfg.Bucket, cfg.LogLevel)
	}
	if cfg, err := stackoutputs.Config(t.Context(), "", getenv); err != nil || cfg.Store != "bolt" || cfg.Tables.APIKeys != "local-keys" {
		t.Errorf("without a stack: %+v, %v", cfg, err)
	}
	if _, err := stackoutputs.Config(t.Context(), "Old", getenv); err == nil || !strings.Contains(err.Error(), "stack Old has no output SnapshotBucket") {
		t.Errorf("a stack of an older version: %v", err)
	}
}

// TestLoadWithoutCredentials: reading a stack's outputs where no AWS
// credentials can be found says that, and how to provide them.
func TestLoadWithoutCredentials(t *testing.T) {
	emulator.NoCredentials(t)
	_, err := stackoutputs.Load(context.Background(), "Toolshed")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"read the outputs of stack Toolshed: no AWS credentials found: ", "AWS_PROFILE", "AWS_ACCESS_KEY_ID"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}
