// Command gitlayer lays out the Lambda layer that gives the history tools'
// function the git program: the Lambda runtime (provided.al2023) has none.
// It downloads Debian's packages of git and of the two libraries git links
// beyond the C library (libpcre2-8-0, zlib1g) for one architecture with
// apt-get download, extracts them with dpkg-deb, and writes
//
//	DIR/bin/git                  (Lambda puts /opt/bin on PATH)
//	DIR/lib/libpcre2-8.so.0      (and /opt/lib on LD_LIBRARY_PATH)
//	DIR/lib/libz.so.1
//	DIR/packages.txt             the packages and versions it came from
//
// Only git itself: the history tools run its builtins (log, diff-tree,
// blame, rev-parse, cat-file, for-each-ref, archive, ...), none of the
// programs in git-core. The C library is the runtime's own, so gitlayer
// refuses a git that needs a newer glibc than AL2023's (al2023GLIBC), or a
// library neither the layer nor the C library provides.
//
//	go run ./scripts/gitlayer -arch arm64 -o build/git-layer
//
// `make build` lays out the arm64 layer; the Lambda harness lays out one
// for the host (shared/testenv/deploytest).
package main

import (
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// al2023GLIBC is the glibc of Lambda's provided.al2023 runtime: the newest
// symbol version a binary of the layer may need.
const al2023GLIBC = "2.34"

// packages are the Debian packages the layer is made of.
var packages = []string{"git", "libpcre2-8-0", "zlib1g"}

// layerLibs are the libraries git needs that the layer carries; the others
// it needs must be the C library's (runtimeLib).
var layerLibs = []string{"libpcre2-8.so.0", "libz.so.1"}

// machines are the ELF machines of the architectures (Debian's names).
var machines = map[string]elf.Machine{"arm64": elf.EM_AARCH64, "amd64": elf.EM_X86_64}

func main() {
	arch := flag.String("arch", runtime.GOARCH, "the architecture, as Debian names it: arm64 (Lambda's) or amd64")
	out := flag.String("o", "", "the layer's folder (replaced)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gitlayer [-arch arm64|amd64] -o DIR")
		os.Exit(2)
	}
	if err := build(*arch, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gitlayer:", err)
		os.Exit(1)
	}
}

// build downloads and extracts the packages for arch and lays out the
// layer in out.
func build(arch, out string) error {
	if _, ok := machines[arch]; !ok {
		return fmt.Errorf("unknown architecture %q (arm64 or amd64)", arch)
	}
	work, err := os.MkdirTemp("", "gitlayer-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	args := []string{"download"}
	for _, p := range packages {
		args = append(args, p+":"+arch)
	}
	if err := run(work, "apt-get", args...); err != nil {
		return fmt.Errorf("download the packages (for another architecture than the host's, `dpkg --add-architecture %s && apt-get update` first): %w", arch, err)
	}
	debs, err := filepath.Glob(filepath.Join(work, "*.deb"))
	if err != nil {
		return err
	}
	root := filepath.Join(work, "root")
	var versions []string
	for _, deb := range debs {
		if err := run(work, "dpkg-deb", "-x", deb, root); err != nil {
			return err
		}
		version, err := output("dpkg-deb", "--show", "--showformat=${Package} ${Version} ${Architecture}", deb)
		if err != nil {
			return err
		}
		versions = append(versions, version)
	}
	return layOut(root, arch, versions, out)
}

// layOut copies git and its libraries from the extracted packages (root)
// into out, after checking them, with versions in packages.txt.
func layOut(root, arch string, versions []string, out string) error {
	git := filepath.Join(root, "usr", "bin", "git")
	if err := check(git, arch); err != nil {
		return err
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	for _, dir := range []string{"bin", "lib"} {
		if err := os.MkdirAll(filepath.Join(out, dir), 0o755); err != nil {
			return err
		}
	}
	if err := copyFile(git, filepath.Join(out, "bin", "git"), 0o755); err != nil {
		return err
	}
	for _, lib := range layerLibs {
		found, err := findLib(root, lib)
		if err != nil {
			return err
		}
		if err := check(found, arch); err != nil {
			return err
		}
		if err := copyFile(found, filepath.Join(out, "lib", lib), 0o644); err != nil {
			return err
		}
	}
	slices.Sort(versions)
	return os.WriteFile(filepath.Join(out, "packages.txt"), []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}

// check refuses a binary of another architecture than arch, one needing a
// newer glibc than AL2023's, or one needing a library that is neither the
// layer's nor the C library's.
func check(path, arch string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	if f.Machine != machines[arch] {
		return fmt.Errorf("%s is for %s, not %s", path, f.Machine, arch)
	}
	newest, err := newestGLIBC(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if compareVersions(newest, al2023GLIBC) > 0 {
		return fmt.Errorf("%s needs GLIBC_%s, newer than AL2023's %s: Lambda's runtime could not run it", path, newest, al2023GLIBC)
	}
	needed, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, lib := range needed {
		if !slices.Contains(layerLibs, lib) && !runtimeLib(lib) {
			return fmt.Errorf("%s needs %s, which neither the layer nor the runtime's C library provides", path, lib)
		}
	}
	return nil
}

// runtimeLib reports whether a library is part of the runtime's C library
// (libc, its dynamic loader and its companions), which every Lambda
// runtime has.
func runtimeLib(lib string) bool {
	for _, prefix := range []string{"libc.so.", "ld-linux", "libm.so.", "libpthread.so.", "libdl.so.", "librt.so."} {
		if strings.HasPrefix(lib, prefix) {
			return true
		}
	}
	return false
}

// newestGLIBC is the newest GLIBC_ symbol version f needs ("0" for none).
func newestGLIBC(f *elf.File) (string, error) {
	syms, err := f.DynamicSymbols()
	if err != nil {
		return "", err
	}
	newest := "0"
	for _, s := range syms {
		v, ok := strings.CutPrefix(s.Version, "GLIBC_")
		if ok && s.Section == elf.SHN_UNDEF && compareVersions(v, newest) > 0 {
			newest = v
		}
	}
	return newest, nil
}

// compareVersions compares dotted versions ("2.34", "2.3.4") number by
// number; a part that is not a number counts as 0.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

// findLib finds a library by its name (a symbolic link to the versioned
// file, in lib/ or usr/lib/ and their architecture folders) in root.
func findLib(root, name string) (string, error) {
	var found string
	for _, pattern := range []string{"lib/*/" + name, "usr/lib/*/" + name, "lib/" + name, "usr/lib/" + name} {
		matches, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return "", err
		}
		if len(matches) > 0 {
			found = matches[0]
			break
		}
	}
	if found == "" {
		return "", fmt.Errorf("no %s in the packages", name)
	}
	return filepath.EvalSymlinks(found)
}

// copyFile copies the file at from to a new file to with mode.
func copyFile(from, to string, mode os.FileMode) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, mode)
}

// run runs a program in dir, its output in the error.
func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// output runs a program and returns what it printed.
func output(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return string(out), nil
}
