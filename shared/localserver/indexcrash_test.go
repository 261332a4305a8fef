package localserver_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestIndexSaveSurvivesACrash kills the local server (SIGKILL) in the
// middle of saving its code index, as soon as a file of the save is being
// written, round after round, and restarts it on the same data
// directory: each time it answers from the index it last saved whole
// (read, not built anew), catches up with the files written before the
// crash, and its next save leaves nothing of the interrupted one.
func TestIndexSaveSurvivesACrash(t *testing.T) {
	files := map[string]string{}
	for i := range 1500 {
		files[fmt.Sprintf("pkg%02d/f%04d.go", i%30, i)] = fmt.Sprintf("package pkg\n\n// Func%d does thing %d.\nfunc Func%d() {}\n", i, i, i)
	}
	dir := repotest.WriteDir(t, files)
	data := t.TempDir()
	srv := startProcess(t, map[string]string{
		"TOOLSHED_DATA_DIR": data, "TOOLSHED_AUTH": "off", "TOOLSHED_LOCAL_TENANT": "acme", "TOOLSHED_REPO_DIR": dir,
		"TOOLSHED_INDEX_SAVE_AFTER": "20ms", "TOOLSHED_RATE_LIMITS": "context_search=1000000",
	})
	defer srv.kill()
	index := filepath.Join(data, "index")
	waitUntil(t, "the first save", func() bool { return pointer(index) != "" })
	for round := range 4 {
		// Rewrite a third of the files: the next save writes a segment of
		// them.
		word := fmt.Sprintf("Zebra%d", round)
		for i := round; i < 1500; i += 3 {
			p := filepath.Join(dir, fmt.Sprintf("pkg%02d/f%04d.go", i%30, i))
			os.WriteFile(p, fmt.Appendf(nil, "package pkg\n\n// %s%d stripes %d.\nfunc %s%d() {}\n", word, i, i, word, i), 0o644)
		}
		waitUntil(t, "a save in progress", func() bool { return len(temporary(index)) > 0 })
		srv.kill()
		left := temporary(index)
		srv.start(t)
		waitUntil(t, "the restarted index", func() bool {
			return strings.Count(srv.output(), "serving the stored index") == 1 || strings.Contains(srv.output(), "building anew")
		})
		if out := srv.output(); strings.Contains(out, "building anew") {
			t.Fatalf("round %d: the stored index was not read after the crash:\n%s", round, out)
		}
		waitUntil(t, "the files written before the crash", func() bool {
			r, err := srv.call("context_search", fmt.Sprintf(`{"query":"%s%d stripes","limit":1}`, word, 1499-(1499-round)%3))
			return err == nil && r.OK && strings.Contains(string(r.Result), `"state":"ready"`) && strings.Contains(string(r.Result), word)
		})
		waitUntil(t, "the next save", func() bool { return len(temporary(index)) == 0 && pointer(index) != "" })
		t.Logf("round %d: killed while the save wrote %s; the restart read the last save and caught up", round, strings.Join(left, ", "))
	}
}

// pointer returns the pointer of the index saved under index, "" for none.
func pointer(index string) string {
	found, _ := filepath.Glob(filepath.Join(index, "*", indexfile.PointerFile))
	if len(found) == 0 {
		return ""
	}
	raw, _ := os.ReadFile(found[0])
	return string(raw)
}

// temporary lists the files being written under index.
func temporary(index string) []string {
	var out []string
	filepath.WalkDir(index, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".tmp-") {
			rel, _ := filepath.Rel(index, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// waitUntil polls cond (every 100 µs) for up to 30 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(100 * time.Microsecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 30 s", what)
		}
	}
}
