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
