package githistory

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// catFile is the one `git cat-file --batch` a repository's reads of
// objects share, started on the first read and kept: a file at a revision
// is then one request on a pipe, where a git program per read would cost
// 4 ms to start (git.git) and a whole tree's `git archive` 0.6 s. Reads
// take turns. A read whose context ends stops the program (the next read
// starts another), as does any failure, so that a half-read answer never
// answers the next request.
type catFile struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// ErrNoObject means the repository has no object of that id.
var ErrNoObject = errors.New("no such object")

// Object returns the kind ("blob", "tree", "commit", "tag") and the
// content of the object id (a full id), or ErrNoObject.
func (r *Repo) Object(ctx context.Context, id string) (string, []byte, error) {
	if !isID(id) {
		return "", nil, fmt.Errorf("cat-file: %q is not an object id", id)
	}
	c := &r.cat
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	if c.cmd == nil {
		if err := c.start(r); err != nil {
			return "", nil, err
		}
	}
	program := c.cmd.Process
	stop := context.AfterFunc(ctx, func() { program.Kill() })
	kind, data, err := c.ask(id)
	stopped := !stop()
	if stopped || err != nil && !errors.Is(err, ErrNoObject) {
		c.close()
		if stopped {
			return "", nil, ctx.Err()
		}
		return "", nil, fmt.Errorf("git cat-file %s: %w", id, err)
	}
	return kind, data, err
}

// Close stops the repository's cat-file program, if one runs.
func (r *Repo) Close() {
	r.cat.mu.Lock()
	defer r.cat.mu.Unlock()
	r.cat.close()
}

// start starts the program, which lives past the context of the read that
// started it: it ends when closed, or when the process that started it
// does (its input closes).
func (c *catFile) start(r *Repo) error {
	cmd := r.command(context.Background(), "cat-file", "--batch")
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start git cat-file: %w", err)
	}
	c.cmd, c.in, c.out = cmd, in, bufio.NewReaderSize(out, 64<<10)
	return nil
}

// close stops the program and waits for it.
func (c *catFile) close() {
	if c.cmd == nil {
		return
	}
	c.in.Close()
	c.cmd.Process.Kill()
	c.cmd.Wait()
	c.cmd, c.in, c.out = nil, nil, nil
}

// ask sends one request and reads its answer: "<id> <kind> <size>", the
// content and a newline; or "<id> missing".
func (c *catFile) ask(id string) (string, []byte, error) {
	if _, err := io.WriteString(c.in, id+"\n"); err != nil {
		return "", nil, err
	}
	header, err := c.out.ReadString('\n')
	if err != nil {
		return "", nil, err
	}
	f := strings.Fields(header)
	if len(f) == 2 && f[1] == "missing" {
		return "", nil, ErrNoObject
	}
	if len(f) != 3 || f[0] != id {
		return "", nil, fmt.Errorf("unexpected answer %q", header)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return "", nil, fmt.Errorf("unexpected answer %q", header)
	}
	data := make([]byte, size+1)
	if _, err := io.ReadFull(c.out, data); err != nil {
		return "", nil, err
	}
	if data[size] != '\n' {
		return "", nil, fmt.Errorf("the content of %s does not end as announced", id)
	}
	return f[1], data[:size], nil
}
