package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/stackoutputs"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/testenv/dynamotest"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/tenanttest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
)

// now is the clock every command in these tests reads.
func now() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) }

func TestCreateListRevoke(t *testing.T) {
	keys := tooltest.BoltStores(t).APIKeys
	ctx := context.Background()

	var out bytes.Buffer
	if err := command(ctx, keys, []string{"create", "-tenant", "acme", "-name", "laptop", "-repos", "web, api"}, &out, now); err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile(`tsk_[A-Za-z0-9_-]{43}`).FindString(out.String())
	if key == "" {
		t.Fatalf("no key printed: %s", out.String())
	}
	if g, err := auth.Resolve(ctx, keys, key); err != nil || g.Tenant != "acme" || !slices.Equal(g.Repos, []string{"api", "web"}) {
		t.Fatalf("new key resolves to %+v, %v", g, err)
	}
	all, _ := keys.List(ctx)
	if len(all) != 1 || strings.Contains(all[0].Hash, key) || all[0].Hash == key {
		t.Fatalf("stored %+v", all)
	}

	out.Reset()
	if err := command(ctx, keys, []string{"list"}, &out, now); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "acme") || !strings.Contains(out.String(), "api,web") || strings.Contains(out.String(), key) {
		t.Errorf("list output %q", out.String())
	}

	out.Reset()
	if err := command(ctx, keys, []string{"revoke", all[0].Hash[:8]}, &out, now); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Resolve(ctx, keys, key); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("revoked key still resolves: %v", err)
	}

	for _, bad := range [][]string{{"create", "-tenant", "a#b", "-name", "x"}, {"create", "-tenant", "acme"}, {"create", "-tenant", "acme", "-name", "x", "-repos", "a/b"}, {"revoke", "abc"}, {"revoke", "ffffffff"}, {"frobnicate"}} {
		if err := command(ctx, keys, bad, &out, now); err == nil {
			t.Errorf("%v succeeded", bad)
		}
	}
}

// TestCreateFollowsTheTenantRule: create takes exactly the tenants package
// tenant accepts, and a refused tenant's error carries the rule.
func TestCreateFollowsTheTenantRule(t *testing.T) {
	keys := tooltest.BoltStores(t).APIKeys
	create := func(t *testing.T, tenantName string) error {
		return command(t.Context(), keys, []string{"create", "-tenant", tenantName, "-name", "laptop"}, io.Discard, now)
	}
	tenanttest.Agree(t, "apikeys create -tenant", func(t *testing.T, s string) bool {
		return create(t, s) == nil
	})
	if err := create(t, "a+b"); err == nil || !strings.Contains(err.Error(), tenant.Check("a+b").Error()) {
		t.Errorf("create -tenant a+b: %v, want the tenant rule", err)
	}
}

func TestRevokeTwiceAndDelete(t *testing.T) {
	keys := tooltest.BoltStores(t).APIKeys
	ctx := context.Background()
	var out bytes.Buffer
	if err := command(ctx, keys, []string{"create", "-tenant", "acme", "-name", "laptop", "-repos", "web, api"}, &out, now); err != nil {
		t.Fatal(err)
	}
	all, _ := keys.List(ctx)
	id := all[0].Hash[:12]

	steps := []struct {
		args []string
		want string // in the output
	}{
		{[]string{"revoke", id}, "revoked key " + id},
		{[]string{"revoke", id}, "was already revoked at 2026-11-21T12:00:00Z; nothing changed"},
		{[]string{"delete", id}, "deleted key " + id},
	}
	for _, s := range steps {
		out.Reset()
		if err := command(ctx, keys, s.args, &out, now); err != nil {
			t.Fatalf("%v: %v", s.args, err)
		}
		if !strings.Contains(out.String(), s.want) {
			t.Errorf("%v printed %q, want %q", s.args, out.String(), s.want)
		}
	}
	if all, _ := keys.List(ctx); len(all) != 0 {
		t.Errorf("keys left after delete: %+v", all)
	}
	if err := command(ctx, keys, []string{"delete", id}, &out, now); err == nil || !strings.Contains(err.Error(), "no key with id") {
		t.Errorf("deleting a deleted key: %v", err)
	}
}

func TestRunExitStatus(t *testing.T) {
	dir := t.TempDir()
	load := func(stack string) (config.Config, error) {
		if stack != "" {
			return config.Config{}, errors.New("no stack " + stack)
		}
		return config.Config{Store: "bolt", DataDir: dir}, nil
	}
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantOut    string
		wantErr    string
	}{
		{"help", []string{"-h"}, 0, "apikeys [-stack NAME] create -tenant TENANT", ""},
		{"help word", []string{"help"}, 0, "apikeys [-stack NAME] delete ID", ""},
		{"no command", nil, 2, "", "usage:"},
		{"list", []string{"list"}, 0, "ID  TENANT", ""},
		{"unknown command", []string{"frobnicate"}, 1, "", "usage:"},
		{"unknown flag", []string{"-stak", "x", "list"}, 2, "", "usage:"},
		{"a stack, no command", []string{"-stack", "Toolshed"}, 2, "", "usage:"},
		{"the stack is read", []string{"-stack", "Gone", "list"}, 1, "", "no stack Gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			status := run(context.Background(), tt.args, load, &out, &errOut)
			if status != tt.wantStatus || !strings.Contains(out.String(), tt.wantOut) || !strings.Contains(errOut.String(), tt.wantErr) {
				t.Errorf("status %d, stdout %q, stderr %q; want %d, %q, %q", status, out.String(), errOut.String(), tt.wantStatus, tt.wantOut, tt.wantErr)
			}
		})
	}
}

// TestStoreInUse: with the local server holding the store, the CLI says to
// stop it instead of failing obscurely.
func TestStoreInUse(t *testing.T) {
	dir := t.TempDir()
	db, err := boltstore.OpenIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	load := func(string) (config.Config, error) { return config.Config{Store: "bolt", DataDir: dir}, nil }
	var out, errOut bytes.Buffer
	if status := run(context.Background(), []string{"list"}, load, &out, &errOut); status != 1 || !strings.Contains(errOut.String(), "stop the server first") {
		t.Errorf("status %d, stderr %q", status, errOut.String())
	}
}

// TestStack: with -stack, the keys go to the API keys table the deployed
// stack's outputs name (CloudFormation and DynamoDB emulated), and keys
// created there resolve there.
func TestStack(t *testing.T) {
	dynamo := dynamotest.Start(t)
	tables := dynamo.NewTables(t)
	moto := emulator.StartMoto(t)
	outputs := map[string]string{stackoutputs.Bucket: "unused"}
	for table := range config.TableSettings {
		outputs[stackoutputs.Table(table)] = "unused"
	}
	outputs[stackoutputs.Table(config.APIKeysTable)] = tables.APIKeys
	moto.CreateStack(t, "Toolshed", outputs)
	for k, v := range map[string]string{"AWS_ENDPOINT_URL_CLOUDFORMATION": moto.Endpoint, "TOOLSHED_DYNAMODB_ENDPOINT": dynamo.Endpoint,
		"AWS_ACCESS_KEY_ID": "dummy", "AWS_SECRET_ACCESS_KEY": "dummy", "AWS_REGION": "us-east-1"} {
		t.Setenv(k, v)
	}
	load := func(stack string) (config.Config, error) { return stackoutputs.Config(t.Context(), stack, os.Getenv) }

	var out, errOut bytes.Buffer
	if status := run(t.Context(), []string{"-stack", "Toolshed", "create", "-tenant", "acme", "-name", "ci"}, load, &out, &errOut); status != 0 {
		t.Fatalf("create: status %d: %s", status, errOut.String())
	}
	key := regexp.MustCompile(`tsk_[A-Za-z0-9_-]{43}`).FindString(out.String())
	keys := dynamostore.New(dynamo.Client(), tables).APIKeys
	if g, err := auth.Resolve(t.Context(), keys, key); err != nil || g.Tenant != "acme" || g.Repos != nil {
		t.Errorf("the key in the stack's table resolves to %+v, %v", g, err)
	}
	out.Reset()
	if status := run(t.Context(), []string{"-stack", "Toolshed", "list"}, load, &out, &errOut); status != 0 || !strings.Contains(out.String(), "acme") {
		t.Errorf("list: status %d, %q %q", status, out.String(), errOut.String())
	}
	errOut.Reset()
	if status := run(t.Context(), []string{"-stack", "Missing", "list"}, load, &out, &errOut); status != 1 || !strings.Contains(errOut.String(), "stack Missing") {
		t.Errorf("a stack that does not exist: status %d, %q", status, errOut.String())
	}
}
