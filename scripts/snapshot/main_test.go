package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/stackoutputs"
	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/testenv/fakesecret"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tenanttest"
)

// TestPushListRollback runs the CLI against moto_server on a real git
// checkout.
func TestPushListRollback(t *testing.T) {
	s3 := repotest.StartS3(t)
	bucket := s3.Objects()
	ctx := context.Background()
	dir := repotest.WriteDir(t, map[string]string{
		"README.md":      "# Demo\n",
		"src/main.go":    "package main\n",
		".gitignore":     "*.log\n",
		"debug.log":      "ignored\n",
		"notes/todo.txt": "untracked, not ignored\n",
		// Never pushed: secrets, keys and local servers' data.
		".env":                     "SECRET=1\n",
		"config/server.pem":        "-----BEGIN PRIVATE KEY-----\n",
		".toolshed/toolshed.db":    "every tenant's data\n",
		"var/toolshed/toolshed.db": "a configured data directory\n",
		"notes/deploy.txt":         "the deploy key:\n" + fakesecret.PrivateKey(),
	})
	gitRun(t, dir, "init", "-q")
	gitRun(t, dir, "add", "README.md", "src/main.go", ".gitignore")
	gitRun(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "first")
	head := strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD"))
	// Each command reads the clock once; pushes are a minute apart.
	next := time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time {
		t := next
		next = next.Add(time.Minute)
		return t
	}

	cli := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := command(ctx, bucket, settings{MaxMB: 500, DataDir: filepath.Join(dir, "var", "toolshed")}, args, &out, clock)
		return out.String(), err
	}

	// The untracked file makes the tree dirty.
	out, err := cli("push", "-tenant", "acme", "-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	dirty := head + "-dirty-20250115T100000Z"
	want := "pushed snapshots/acme/" + dirty + ".zip for acme/default: commit " + dirty + ", 4 files, 49 bytes"
	if !strings.HasPrefix(out, want) {
		t.Errorf("push printed %q, want it to start with %q", out, want)
	}
	if !strings.Contains(out, "left out 4 files the repository tools never read") ||
		!strings.Contains(out, "left out 1 files whose content holds a secret (a private key, a credential): notes/deploy.txt (rule private-key)") {
		t.Errorf("push did not say what it left out: %q", out)
	}
	// A dirty tree pushes the history of HEAD, which its pointer names.
	if !strings.Contains(out, "history: uploaded history/acme/pack-") || !strings.Contains(out, ": 1 new commits") {
		t.Errorf("push did not say what history it uploaded: %q", out)
	}
	if m, _, _, err := githistory.ReadManifest(ctx, bucket, reposcope.DefaultOf("acme"), ""); err != nil || !slices.Equal(m.Tips, []string{head}) {
		t.Errorf("the history pushed: %+v %v, want tip %s", m, err, head)
	}
	src := repo.NewS3(bucket, repo.S3Options{})
	snap, err := src.Open(ctx, reposcope.DefaultOf("acme"))
	if err != nil {
		t.Fatal(err)
	}
	if _, p, _ := repo.PointerOf(snap); p.Git != head {
		t.Errorf("the pointer names git commit %q, want HEAD %s", p.Git, head)
	}
	var packed []string
	fs.WalkDir(snap, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			packed = append(packed, p)
		}
		return err
	})
	if want := []string{".gitignore", "README.md", "notes/todo.txt", "src/main.go"}; !slices.Equal(packed, want) {
		t.Errorf("packed %q, want %q (tracked plus untracked, not ignored)", packed, want)
	}
	if info, err := fs.Stat(snap, "README.md"); err != nil || !info.ModTime().Equal(repotest.ModTime) {
		t.Errorf("modification time %v, %v; want %s", info, err, repotest.ModTime)
	}

	// A clean tree is pushed under its commit.
	os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte(".env\nconfig/\n.toolshed/\nvar/\nnotes/deploy.txt\n"), 0o644)
	gitRun(t, dir, "add", "notes/todo.txt")
	gitRun(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "second")
	second := strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD"))
	if out, err := cli("push", "-tenant", "acme", "-dir", dir); err != nil || !strings.Contains(out, "commit "+second+", 4 files") {
		t.Fatalf("clean push: %q, %v", out, err)
	}

	out, err = cli("list", "-tenant", "acme")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !regexp.MustCompile(`^\*\s+`+second).MatchString(lines[1]) || !strings.Contains(lines[2], dirty) || strings.HasPrefix(lines[2], "*") ||
		lines[4] != "no precise index was pushed: the navigation tools answer this snapshot by search" {
		t.Errorf("list printed:\n%s", out)
	}

	if out, err := cli("rollback", "-tenant", "acme", "-to", dirty); err != nil || !strings.Contains(out, "acme/default now reads commit "+dirty+" (4 files, 49 bytes)") {
		t.Errorf("rollback: %q, %v", out, err)
	}
	if p, _, _ := repo.ReadPointer(ctx, bucket, reposcope.DefaultOf("acme")); p.Commit != dirty {
		t.Errorf("pointer at %s after rollback", p.Commit)
	}

	// A named repository lives one folder down; the default one is
	// untouched, and -repo default is the default repository.
	if out, err := cli("push", "-tenant", "acme", "-repo", "web", "-dir", dir); err != nil ||
		!strings.HasPrefix(out, "pushed snapshots/acme/web/"+second+".zip for acme/web: commit "+second) {
		t.Errorf("push -repo web: %q, %v", out, err)
	}
	if p, _, _ := repo.ReadPointer(ctx, bucket, reposcope.Ref{Tenant: "acme", Name: "web"}); p.Commit != second {
		t.Errorf("acme/web points at %q", p.Commit)
	}
	if out, err := cli("list", "-tenant", "acme", "-repo", "default"); err != nil || !strings.Contains(out, dirty) || strings.Contains(out, "web") {
		t.Errorf("list -repo default: %q, %v", out, err)
	}
	if _, err := cli("push", "-tenant", "acme", "-repo", "a/b", "-dir", dir); err == nil {
		t.Error("push -repo a/b was accepted")
	}

	// Size limit: a 2 MB file against -max-mb 1; the pointer stays.
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), bytes.Repeat([]byte("x"), 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cli("push", "-tenant", "acme", "-dir", dir, "-max-mb", "1"); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("oversized push: %v", err)
	}
	if p, _, _ := repo.ReadPointer(ctx, bucket, reposcope.DefaultOf("acme")); p.Commit != dirty {
		t.Errorf("pointer moved to %s by a refused push", p.Commit)
	}

	for _, bad := range [][]string{
		{}, {"push"}, {"push", "-tenant", "../x"}, {"list", "-tenant", "a b"}, {"frobnicate", "-tenant", "acme"},
		{"push", "-tenant", "acme", "-dir", t.TempDir()}, // not a git checkout
		{"rollback", "-tenant", "acme", "-to", "nope"}, {"push", "-tenant", "acme", "extra"},
	} {
		if _, err := cli(bad...); err == nil {
			t.Errorf("%q succeeded", bad)
		}
	}
}

// TestTenantFlag: -tenant follows package tenant's rule (push -tenant a+b
// once published a snapshot no API key could reach), and a refused
// tenant's error carries the rule.
func TestTenantFlag(t *testing.T) {
	notGit := t.TempDir()
	push := func(t *testing.T, tenantName string) error {
		err := command(t.Context(), nil, settings{MaxMB: 1}, []string{"push", "-tenant", tenantName, "-dir", notGit}, io.Discard, time.Now)
		if err == nil {
			t.Fatalf("push -tenant %q from %s (not a git checkout) succeeded", tenantName, notGit)
		}
		return err
	}
	tenanttest.Agree(t, "snapshot -tenant", func(t *testing.T, s string) bool {
		return !errors.Is(push(t, s), tenant.ErrInvalid)
	})
	if err := push(t, "a+b"); !strings.Contains(err.Error(), tenant.Check("a+b").Error()) {
		t.Errorf("push -tenant a+b: %v, want the tenant rule", err)
	}
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}

// TestStack: with -stack, the CLI uses the bucket the deployed stack's
// outputs name (CloudFormation and S3 on moto_server); a stack without
// the output, or no stack and no TOOLSHED_BUCKET, is refused with the
// reason.
func TestStack(t *testing.T) {
	s3 := repotest.StartS3(t)
	outputs := map[string]string{stackoutputs.Bucket: s3.Bucket}
	for table := range config.TableSettings {
		outputs[stackoutputs.Table(table)] = "unused"
	}
	s3.Moto.CreateStack(t, "Toolshed", outputs)
	s3.Moto.CreateStack(t, "Old", map[string]string{stackoutputs.APIURL: "https://old.example/"})
	for k, v := range map[string]string{"AWS_ENDPOINT_URL_CLOUDFORMATION": s3.Moto.Endpoint, "TOOLSHED_S3_ENDPOINT": s3.Moto.Endpoint,
		"AWS_ACCESS_KEY_ID": "dummy", "AWS_SECRET_ACCESS_KEY": "dummy", "AWS_REGION": "us-east-1", "TOOLSHED_BUCKET": ""} {
		t.Setenv(k, v)
	}
	s3.Publish(t, "acme", "abc123", repotest.WriteDir(t, map[string]string{"README.md": "# Demo\n"}))

	tests := []struct {
		args    []string
		want    string // in the output
		wantErr string
	}{
		{[]string{"-stack", "Toolshed", "list", "-tenant", "acme"}, "*  abc123", ""},
		{[]string{"-stack", "Toolshed", "list", "-tenant", "other"}, "other/default has no snapshots", ""},
		{[]string{"-stack", "Old", "list", "-tenant", "acme"}, "", "stack Old has no output SnapshotBucket"},
		{[]string{"list", "-tenant", "acme"}, "", "name the deployed stack (-stack Toolshed) or set TOOLSHED_BUCKET"},
		{[]string{"-stak", "Toolshed", "list"}, "", "usage:"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		err := run(t.Context(), tt.args, &out)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: error %v, want one about %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !strings.Contains(out.String(), tt.want) {
			t.Errorf("%v: %q, %v; want %q", tt.args, out.String(), err, tt.want)
		}
	}
}

// TestIndexGo: index-go writes the SCIP index of a Go module, without a
// bucket or a stack (it is a local step of push).
func TestIndexGo(t *testing.T) {
	t.Setenv("TOOLSHED_BUCKET", "")
	dir := repotest.WriteDir(t, map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "m.go": "package m\n\nfunc F() {}\n"})
	out := filepath.Join(t.TempDir(), "index.scip")
	if err := run(t.Context(), []string{"index-go", "-o", out, dir}, io.Discard); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(data, []byte("scip-go gomod example.com/m . `example.com/m`/F().")) {
		t.Errorf("index %q, %v; want one with m.F", data, err)
	}
	if err := run(t.Context(), []string{"index-go"}, io.Discard); err == nil || !strings.Contains(err.Error(), "DIR is missing") {
		t.Errorf("without DIR: %v", err)
	}
}
