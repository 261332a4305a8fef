package fileio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/fileio"
	"github.com/toolshed/toolshed/shared/workspace"
)

// Tenants of the tests.
const (
	alice = "alice"
	bob   = "bob"
)

// generous is a quota no test reaches unless it means to.
var generous = workspace.Quota{Bytes: 1 << 30, Files: 10000}

// backend is one place workspaces can live, made fresh for each test.
type backend interface {
	// files returns the workspaces with a quota.
	files(t *testing.T, quota workspace.Quota) fileio.Files
	// restart returns the workspaces as a server starting on the same
	// storage opens them (locally: after Sweep).
	restart(t *testing.T, quota workspace.Quota) fileio.Files
	// plant stores raw bytes as a tenant's file behind the tool's back.
	plant(t *testing.T, tenant, path string, data []byte)
	// stored lists every stored file as "<tenant>/<path>" with its bytes,
	// wherever it is: inside the workspaces or not.
	stored(t *testing.T) map[string]string
}

// dirBackend is a local directory (workspace.Dir). Its workspaces are
// <base>/data/workspace; stored also walks all of <base>, so a file
// written outside the workspaces shows up.
type dirBackend struct{ base string }

func newDirBackend(t *testing.T) *dirBackend {
	return &dirBackend{base: t.TempDir()}
}

func (d *dirBackend) workspaces() string { return filepath.Join(d.base, "data", "workspace") }

func (d *dirBackend) files(_ *testing.T, quota workspace.Quota) fileio.Files {
	return workspace.NewDir(d.workspaces(), quota)
}

func (d *dirBackend) restart(t *testing.T, quota workspace.Quota) fileio.Files {
	t.Helper()
	dir := workspace.NewDir(d.workspaces(), quota)
	if _, err := dir.Sweep(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (d *dirBackend) plant(t *testing.T, tenant, path string, data []byte) {
	t.Helper()
	name := filepath.Join(d.workspaces(), tenant, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (d *dirBackend) stored(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(d.base, func(name string, e os.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(d.workspaces(), name)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// s3Backend is a bucket on moto_server (workspace.Bucket), a new bucket
// per test. stored lists the whole bucket.
type s3Backend struct {
	client *s3.Client
	bucket string
}

// newS3Backend's client retries server errors, as the production client
// (the SDK's standard retryer) does: moto_server, unlike S3, sometimes
// answers 500 when one key is overwritten concurrently (its in-memory
// object is closed under a reader: "I/O operation on closed file").
func newS3Backend(t *testing.T, m *emulator.Moto) *s3Backend {
	o := m.S3().Options()
	o.RetryMaxAttempts = 10
	return &s3Backend{client: s3.New(o), bucket: m.NewBucket(t)}
}

func (b *s3Backend) files(_ *testing.T, quota workspace.Quota) fileio.Files {
	return workspace.NewBucket(objects.New(b.client, b.bucket), quota)
}

func (b *s3Backend) restart(t *testing.T, quota workspace.Quota) fileio.Files {
	return b.files(t, quota)
}

func (b *s3Backend) plant(t *testing.T, tenant, path string, data []byte) {
	t.Helper()
	_, err := b.client.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: &b.bucket, Key: aws.String("workspace/" + tenant + "/" + path), Body: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
}

func (b *s3Backend) stored(t *testing.T) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	pages := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: &b.bucket})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			obj, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.bucket, Key: o.Key})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			buf.ReadFrom(obj.Body)
			obj.Body.Close()
			key := aws.ToString(o.Key)
			if rel, ok := strings.CutPrefix(key, "workspace/"); ok {
				key = rel
			} else {
				key = "(outside workspace/) " + key
			}
			out[key] = buf.String()
		}
	}
	return out
}

// jsonDecode decodes a result.
func jsonDecode(raw []byte, v any) error { return json.Unmarshal(raw, v) }

// TestBackends runs every file-io test on a local directory and on S3
// (one moto_server for all).
func TestBackends(t *testing.T) {
	m := emulator.StartMoto(t)
	makers := []struct {
		name string
		make func(t *testing.T) backend
	}{
		{"dir", func(t *testing.T) backend { return newDirBackend(t) }},
		{"s3", func(t *testing.T) backend { return newS3Backend(t, m) }},
	}
	tests := []struct {
		name string
		run  func(t *testing.T, be backend)
	}{
		{"hostile paths", testHostilePaths},
		{"round trip", testRoundTrip},
		{"tenants", testTenants},
		{"folders and files in the way", testInTheWay},
		{"sizes and encodings", testSizes},
		{"quotas", testQuotas},
		{"every name is the tenant's", testEveryNameIsTheTenants},
		{"concurrent writers", testConcurrentWriters},
	}
	for _, mk := range makers {
		t.Run(mk.name, func(t *testing.T) {
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, mk.make(t)) })
			}
		})
	}
}

// env is file-io over one backend behind the real pipeline.
type env struct {
	*tooltest.Harness
	be backend
}

func newEnv(t *testing.T, be backend, quota workspace.Quota) env {
	t.Helper()
	return newEnvOver(t, be, be.files(t, quota))
}

// newEnvOver is file-io over files, which be made.
func newEnvOver(t *testing.T, be backend, files fileio.Files) env {
	t.Helper()
	return env{Harness: tooltest.New(t, tooltest.BoltStores(t), []toolkit.Tool{fileio.Tool(files)}), be: be}
}

type readResult struct {
	OK       bool   `json:"ok"`
	Contents string `json:"contents"`
	Path     string `json:"path"`
	Bytes    int    `json:"bytes"`
}

type writeResult struct {
	OK           bool   `json:"ok"`
	BytesWritten int    `json:"bytes_written"`
	Path         string `json:"path"`
}

func readArgs(p string) string {
	return fmt.Sprintf(`{"command":"read_file","path":%s}`, quote(p))
}

func writeArgs(p, content string) string {
	return fmt.Sprintf(`{"command":"write_file","path":%s,"content":%s}`, quote(p), quote(content))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (e env) write(t *testing.T, tenant, p, content string) writeResult {
	t.Helper()
	var out writeResult
	e.OK(t, tenant, fileio.ToolName, writeArgs(p, content), &out)
	return out
}

func (e env) read(t *testing.T, tenant, p string) string {
	t.Helper()
	var out readResult
	e.OK(t, tenant, fileio.ToolName, readArgs(p), &out)
	return out.Contents
}

// fails checks a call's refusal: its code, message and details.reason
// (when reason is not empty).
func fails(t *testing.T, o toolkit.Outcome, code toolerr.Code, msg, reason string) {
	t.Helper()
	switch {
	case o.OK:
		t.Errorf("succeeded with %s; want %s %q", o.Result, code, msg)
	case o.Error.Code != code || o.Error.Message != msg:
		t.Errorf("got %s %q %v; want %s %q", o.Error.Code, o.Error.Message, o.Error.Details, code, msg)
	case reason != "" && fmt.Sprint(o.Error.Details["reason"]) != reason:
		t.Errorf("reason %q, want %q", o.Error.Details["reason"], reason)
	}
}
