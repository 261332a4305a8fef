package githistory

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// CommitPatch is one commit's patch, a part per file in the order
// Changes lists them.
type CommitPatch struct {
	Hash  string
	Files [][]byte
}

// EachPatch calls fn with the patch of each commit q selects (against its
// first parent), newest first, as git log -p writes them, until fn
// returns false or ctx ends. It returns how many commits fn saw.
func (r *Repo) EachPatch(ctx context.Context, q LogQuery, fn func(CommitPatch) bool) (int, error) {
	cmd := r.command(ctx, logArgs(q, "--format=%x1e%H", "-p")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	seen, stopped, readErr := readPatches(stdout, func() bool { return ctx.Err() != nil }, fn)
	if stopped {
		cmd.Process.Kill()
	}
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil || stopped:
		return seen, nil
	case readErr != nil:
		return seen, readErr
	case waitErr != nil:
		return seen, fmt.Errorf("git log -p: %w: %s", waitErr, strings.TrimSpace(stderr.String()))
	}
	return seen, nil
}

// readPatches cuts git log -p's output into commits (a line "\x1e<id>"
// starts each) and calls fn with each. It reports how many fn saw and
// whether fn stopped. When the output ends because git was stopped
// (killed reports true), the last commit may be cut short: fn never sees
// it, so that it is searched whole on the next page.
func readPatches(r io.Reader, killed func() bool, fn func(CommitPatch) bool) (int, bool, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	var cur *CommitPatch
	var body bytes.Buffer
	seen := 0
	flush := func() bool {
		if cur == nil {
			return true
		}
		cur.Files = splitFiles(bytes.TrimLeft(body.Bytes(), "\n"))
		seen++
		return fn(*cur)
	}
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[0] == 0x1e {
			if !flush() {
				return seen, true, nil
			}
			cur = &CommitPatch{Hash: string(bytes.TrimSpace(line[1:]))}
			body.Reset()
		} else if cur != nil {
			body.Write(line)
		}
		if err != nil {
			if killed() {
				return seen, false, nil
			}
			if !flush() {
				return seen, true, nil
			}
			if errors.Is(err, io.EOF) {
				return seen, false, nil
			}
			return seen, false, err
		}
	}
}

// ParsePatch reads one file's part of a patch (a part CommitPatch holds).
func ParsePatch(b []byte) (Patch, error) { return parsePatch(b) }
