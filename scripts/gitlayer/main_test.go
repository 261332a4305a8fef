package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// hostLayer lays out the layer for the host once (apt-get download, as
// the harness does) and returns its folder.
var hostLayer = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "gitlayer-test-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "git-layer")
	return out, build(runtime.GOARCH, out)
})

func layer(t *testing.T) string {
	t.Helper()
	dir, err := hostLayer()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMain removes the host layer after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := hostLayer(); err == nil {
		os.RemoveAll(filepath.Dir(dir))
	}
	os.Exit(code)
}

// TestLayerRuns runs the layer's git as Lambda would: found on a PATH of
// the layer's bin alone (no /usr/bin, whose git this machine has and
// AL2023 has not), its libraries loaded from the layer's lib
// (LD_LIBRARY_PATH), as the dynamic loader's trace shows.
func TestLayerRuns(t *testing.T) {
	dir := layer(t)
	cmd := exec.Command("/bin/sh", "-c", "git version")
	cmd.Env = []string{"PATH=" + filepath.Join(dir, "bin"), "LD_LIBRARY_PATH=" + filepath.Join(dir, "lib"), "LD_DEBUG=libs"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git version: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "git version 2.") {
		t.Errorf("git version printed %q", stdout.String())
	}
	for _, lib := range layerLibs {
		if want := "calling init: " + filepath.Join(dir, "lib", lib); !strings.Contains(stderr.String(), want) {
			t.Errorf("the loader's trace lacks %q:\n%s", want, stderr.String())
		}
	}
	versions, err := os.ReadFile(filepath.Join(dir, "packages.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range packages {
		if !strings.Contains(string(versions), p+" ") {
			t.Errorf("packages.txt does not name %s:\n%s", p, versions)
		}
	}
}

// TestCheck refuses what Lambda's runtime could not run: a git needing a
// newer glibc than AL2023's (the layer's own, its version string patched),
// or one of another architecture.
func TestCheck(t *testing.T) {
	git := filepath.Join(layer(t), "bin", "git")
	data, err := os.ReadFile(git)
	if err != nil {
		t.Fatal(err)
	}
	newest := "GLIBC_" + al2023GLIBC + "\x00"
	if !bytes.Contains(data, []byte(newest)) {
		t.Fatalf("the host's git does not need %q: cannot make the fake", newest)
	}
	fake := filepath.Join(t.TempDir(), "git")
	if err := os.WriteFile(fake, bytes.ReplaceAll(data, []byte(newest), []byte("GLIBC_2.99\x00")), 0o755); err != nil {
		t.Fatal(err)
	}
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[runtime.GOARCH]
	tests := []struct {
		name, path, arch, wantErr string
	}{
		{"the layer's git", git, runtime.GOARCH, ""},
		{"needs a newer glibc", fake, runtime.GOARCH, "needs GLIBC_2.99, newer than AL2023's " + al2023GLIBC},
		{"another architecture", git, other, "not " + other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := check(tt.path, tt.arch)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("check: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("check: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int // its sign
	}{
		{"2.34", "2.34", 0},
		{"2.3.4", "2.34", -1},
		{"2.35", "2.34", 1},
		{"2.4", "2.34", -1},
		{"0", "2.2.5", -1},
	}
	for _, tt := range tests {
		got := compareVersions(tt.a, tt.b)
		if (got > 0) != (tt.want > 0) || (got < 0) != (tt.want < 0) {
			t.Errorf("compareVersions(%q, %q) = %d, want sign %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestUnknownArchitecture(t *testing.T) {
	if err := build("riscv64", t.TempDir()); err == nil || !strings.Contains(err.Error(), "unknown architecture") {
		t.Errorf("build(riscv64): %v", err)
	}
}
