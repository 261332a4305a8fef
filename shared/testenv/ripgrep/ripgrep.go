// Package ripgrep is grep_codebase's baseline in benchmarks: the classes
// of queries both are timed on, and ripgrep (rg) run over the same files
// grep_codebase searches, timed and counted.
package ripgrep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/pathmatch"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/secretscan"
	"github.com/toolshed/toolshed/shared/testenv/latency"
)

// Class is one kind of query of the benchmarks.
type Class struct {
	Name, Pattern string
	CaseSensitive bool
}

// Classes are the queries every grep benchmark runs: literals, regular
// expressions, alternations, and a pattern that matches nothing, each
// case-sensitive and not.
var Classes = []Class{
	{"literal", "func", true},
	{"literal -i", "errorf", false},
	{"regex", "interface.*Context", true},
	{"regex -i", "interface.*Context", false},
	{"alternation", "TODO|FIXME|XXX", true},
	{"alternation -i", "TODO|FIXME|XXX", false},
	{"no match", "xyznonexistent123", true},
	{"no match -i", "xyznonexistent123", false},
}

// Installed returns an error saying how to install rg when it is missing.
func Installed() error {
	if _, err := exec.LookPath("rg"); err != nil {
		return fmt.Errorf("ripgrep (rg) is not installed: apt-get install ripgrep")
	}
	return nil
}

// Version is the first line of `rg --version`, or "rg (unknown version)".
func Version() string {
	out, err := exec.Command("rg", "--version").Output()
	if err != nil {
		return "rg (unknown version)"
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return first
}

// Time runs rg for a class in dir runs times and returns its p50 and its
// count of matching lines. It skips what grep_codebase skips beyond
// ripgrep's defaults: the excluded folders, the repository's deny list and
// the files holding secrets.
func Time(dir string, c Class, runs int) (time.Duration, int, error) {
	args := []string{"--line-number", "--column", "--no-heading"}
	if !c.CaseSensitive {
		args = append(args, "-i")
	}
	return Run(dir, runs, append(args, "-e", c.Pattern)...)
}

// Run runs rg with args in dir runs times, skipping what the repository
// tools skip (as Time does), and returns its p50 and the lines of its
// output.
func Run(dir string, runs int, args ...string) (time.Duration, int, error) {
	skip, err := excludes(dir)
	if err != nil {
		return 0, 0, err
	}
	args = append(append([]string{"--no-require-git", "--no-config"}, skip...), args...)
	var times []time.Duration
	count := 0
	for range runs {
		cmd := exec.Command("rg", args...)
		cmd.Dir = dir
		t0 := time.Now()
		out, err := cmd.Output()
		times = append(times, time.Since(t0))
		if err != nil && len(out) > 0 {
			return 0, 0, fmt.Errorf("rg %s in %s: %w", strings.Join(args, " "), dir, err)
		}
		count = bytes.Count(out, []byte{'\n'})
	}
	return latency.Percentile(times, 50), count, nil
}

// excludes are what the repository tools never search in dir, as ripgrep
// globs: the excluded folders, the deny list (without regard to case, as
// the policy reads it) and the files whose content holds a secret.
func excludes(dir string) ([]string, error) {
	var out []string
	for _, d := range repo.ExcludedDirs {
		out = append(out, "-g", "!"+d+"/")
	}
	for _, p := range repo.DefaultDeny {
		out = append(out, "--iglob", "!"+p)
	}
	held, err := secretFiles(dir)
	for _, p := range held {
		out = append(out, "-g", "!/"+pathmatch.Literal(p))
	}
	return out, err
}

// secretFiles lists the files under dir, outside the folders search never
// enters, whose content holds a secret (secretscan.Find), as slash paths.
func secretFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != dir && (strings.HasPrefix(d.Name(), ".") || slices.Contains(repo.ExcludedDirs, d.Name())):
			return fs.SkipDir
		case !d.Type().IsRegular():
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if secretscan.Find(data) != nil {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find the files holding secrets in %s: %w", dir, err)
	}
	return out, nil
}

// Comparison is a class timed on grep_codebase and on rg over the same
// files: both p50s and both counts of matching lines.
type Comparison struct {
	Class              Class
	Tool, RG           time.Duration
	ToolCount, RGCount int
}

// Ratio is the tool's p50 as a share of rg's.
func (c Comparison) Ratio() float64 { return float64(c.Tool) / float64(c.RG) }

// Compare times a class on the tool and on rg in dir, runs times each.
// search runs the tool once for the class and returns its count of
// matching lines; it is called once first to warm what the class needs.
func Compare(dir string, c Class, runs int, search func(Class) (int, error)) (Comparison, error) {
	if _, err := search(c); err != nil {
		return Comparison{}, fmt.Errorf("%s: %w", c.Name, err)
	}
	cmp := Comparison{Class: c}
	var times []time.Duration
	for range runs {
		t0 := time.Now()
		n, err := search(c)
		times = append(times, time.Since(t0))
		if err != nil {
			return Comparison{}, fmt.Errorf("%s: %w", c.Name, err)
		}
		cmp.ToolCount = n
	}
	cmp.Tool = latency.Percentile(times, 50)
	var err error
	cmp.RG, cmp.RGCount, err = Time(dir, c, runs)
	return cmp, err
}

// Args are grep_codebase's arguments for the class: its pattern and case,
// at most 50 matches returned.
func (c Class) Args() map[string]any {
	return map[string]any{"pattern": c.Pattern, "caseSensitive": c.CaseSensitive, "limit": 50}
}

// TotalMatches reads grep_codebase's count of matching lines from its
// result.
func TotalMatches(result []byte) (int, error) {
	var res struct {
		TotalMatches int `json:"totalMatches"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		return 0, fmt.Errorf("decode the grep result: %w", err)
	}
	return res.TotalMatches, nil
}
