package lambdaentry_test

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/testenv/dynamotest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestArm64ToolBootstrap builds the tool function's bootstrap as `make
// build` does for Lambda (linux/arm64; cgo for tree-sitter, linked
// statically), checks that it is one static arm64 binary, and runs it
// under qemu-aarch64-static: its -version, then, under the Lambda Runtime
// API as deployed, a find_symbols invocation over a published snapshot
// that only tree-sitter reads (TypeScript).
func TestArm64ToolBootstrap(t *testing.T) {
	const qemu = "qemu-aarch64-static"
	if _, err := exec.LookPath(qemu); err != nil {
		t.Skipf("%s is not installed (make test installs it): %v", qemu, err)
	}
	root, err := dynamotest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	bootstrap := filepath.Join(out, "tool", "bootstrap")
	build := exec.Command("make", "-s", "BUILD="+out, "VERSION="+testVersion, bootstrap)
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make %s: %v\n%s", bootstrap, err, b)
	}

	bin, err := elf.Open(bootstrap)
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	if bin.Machine != elf.EM_AARCH64 {
		t.Errorf("the bootstrap is for %v, want arm64", bin.Machine)
	}
	for _, p := range bin.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the bootstrap asks for a dynamic loader: it is not static")
		}
	}

	version, err := exec.Command(qemu, bootstrap, "-version").CombinedOutput()
	if err != nil || !strings.Contains(string(version), testVersion) {
		t.Fatalf("%s %s -version: %v: %s", qemu, bootstrap, err, version)
	}

	d := newDeployment(t)
	d.S3(t)
	s3 := repotest.S3{Moto: d.Moto, Bucket: d.Bucket}
	s3.Publish(t, "arm64", "c1", "../toolset/testdata/example-repo")
	cfg := d.ToolConfig(t, "find_symbols")
	cfg.Name, cfg.Bootstrap, cfg.Emulator = "toolshed-find-symbols-arm64", bootstrap, qemu
	fn := d.Start(t, cfg)
	resp := invoke(t, fn, directEvent("find_symbols", `{"name":"generateToken"}`, "arm64", "arm64-1"))
	hasFields(t, string(resp.Payload), `{"ok":true,"result":{"symbols":[{"name":"generateToken","kind":"method",`+
		`"path":"src/server/auth/AuthService.ts","container":"AuthService","doc":"Generate JWT token"}],"total":1}}`)
}
