package sciprun

import (
	"regexp"
	"strings"
)

// tailBytes is how much of an indexer's output a run keeps: its last
// lines, for the error that says why it failed; and headBytes of its
// first, where Go's runtime says why it stopped before a dump of every
// thread that may be longer than tailBytes.
const (
	tailBytes = 8 << 10
	headBytes = 1 << 10
)

// tail is an io.Writer that keeps the first headBytes and the last
// tailBytes written to it.
type tail struct {
	head []byte
	buf  []byte
	cut  bool // bytes were written between head and buf
}

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if room := headBytes - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head, p = append(t.head, p[:k]...), p[k:]
	}
	if len(p) >= tailBytes {
		p = p[len(p)-tailBytes:]
		t.buf, t.cut = t.buf[:0], true
	}
	if over := len(t.buf) + len(p) - tailBytes; over > 0 {
		t.buf, t.cut = append(t.buf[:0], t.buf[over:]...), true
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns what was kept, without a line cut where bytes were
// left out between the head and the tail.
func (t *tail) String() string {
	head, rest := string(t.head), string(t.buf)
	if t.cut {
		if i := strings.LastIndexByte(head, '\n'); i >= 0 {
			head = head[:i+1]
		}
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			rest = rest[i+1:]
		}
		head += "…\n"
	}
	return strings.TrimSpace(head + rest)
}

// headline matches the line that says why a program stopped: Go's
// "panic: …", "fatal error: …" and "runtime/cgo: …", V8's "FATAL ERROR:
// …", node's "TypeError: …", an indexer's "error: …".
var headline = regexp.MustCompile(`^(panic|fatal error|runtime/cgo|FATAL ERROR|[A-Za-z]*Error|error): `)

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
