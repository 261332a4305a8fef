package sciprun

import (
	"regexp"
	"strings"
)

// tailBytes is how much of an indexer's output a run keeps: its last
// lines, for the error that says why it failed.
const tailBytes = 8 << 10

// tail is an io.Writer that keeps the last tailBytes written to it.
type tail struct{ buf []byte }

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= tailBytes {
		p = p[len(p)-tailBytes:]
		t.buf = t.buf[:0]
	}
	if over := len(t.buf) + len(p) - tailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns what was kept, without a line cut at its start.
func (t *tail) String() string {
	s := string(t.buf)
	if len(t.buf) == tailBytes {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	return strings.TrimSpace(s)
}

// headline matches the line that says why a program stopped: Go's
// "panic: …" and "fatal error: …", V8's "FATAL ERROR: …", node's
// "TypeError: …", an indexer's "error: …".
var headline = regexp.MustCompile(`^(panic|fatal error|FATAL ERROR|[A-Za-z]*Error|error): `)

// summary returns what of an indexer's output says why it stopped: its
// last headline, else its last three lines, in at most 400 bytes.
func summary(output string) string {
	lines := strings.Split(strings.TrimSpace(output), "\n")
	out := ""
	for i := len(lines) - 1; i >= 0 && out == ""; i-- {
		if headline.MatchString(lines[i]) {
			out = strings.TrimSpace(lines[i])
		}
	}
	if out == "" {
		out = strings.Join(lines[max(0, len(lines)-3):], " | ")
	}
	if len(out) > 400 {
		out = strings.ToValidUTF8(out[:400], "") + "…"
	}
	return out
}
