// Package emulator runs local stand-ins for AWS services as child processes
// in tests: dynalite (DynamoDB, npm) through package dynamotest, and
// moto_server (S3 and more, Python) through Moto. Each runs on a free
// loopback port, is killed when the test ends, and exits by itself when the
// test process dies (it watches its standard input, which only the test
// holds open). A missing emulator fails the test: it is never skipped.
//
// Fault tests control the processes (Process: hang, resume, kill,
// restart) and put a Proxy between a server and an emulator to slow it
// down or make it throttle.
package emulator

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds how long Start waits for an emulator to listen.
const startTimeout = 20 * time.Second

// Start runs the command built by cmdFor(port) on a free loopback port,
// waits until the port accepts connections and registers a cleanup that
// stops it. It returns "127.0.0.1:<port>". A port taken by someone else
// between picking and binding is retried on another port.
func Start(t testing.TB, name string, cmdFor func(port int) *exec.Cmd) string {
	t.Helper()
	return StartProcess(t, name, cmdFor).Addr
}

// Node returns the path of node to run the npm package pkg with (dynalite,
// oidc-provider, the MCP SDK), failing t (never skipping) when pkg is not
// installed under root (`npm ci` at the repo root) or node is not on PATH.
// who starts the failure's message.
func Node(t testing.TB, who, root, pkg string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, "node_modules", pkg, "package.json")); err != nil {
		t.Fatalf("%s: %s is not installed (%v): run `npm ci` at the repo root (%s)", who, pkg, err, root)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("%s: node is not on PATH (%v): install Node.js, then run `npm ci` at the repo root", who, err)
	}
	return node
}

// UniqueName returns "toolshed-test-" and 12 random hex digits: a name of
// a bucket, a queue or a set of tables that no other test takes.
func UniqueName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "toolshed-test-" + hex.EncodeToString(b)
}

// Process is a running emulator that a fault test controls: it can hang
// it (Stop, SIGSTOP: connections are still accepted by the kernel, and
// nothing answers), resume it (Continue), make it refuse (Kill: nothing
// listens) and bring it back on the same port (Restart).
type Process struct {
	// Addr is "127.0.0.1:<port>".
	Addr string

	name   string
	port   int
	cmdFor func(port int) *exec.Cmd

	mu   sync.Mutex
	run  *running // nil while killed
	logs *Output
}

// running is one run of the emulator's process.
type running struct {
	cmd    *exec.Cmd
	stdin  io.Closer
	exited chan error
}

// StartProcess is Start returning the Process.
func StartProcess(t testing.TB, name string, cmdFor func(port int) *exec.Cmd) *Process {
	t.Helper()
	var lastErr error
	for range 3 {
		port, err := FreePort()
		if err != nil {
			t.Fatalf("emulator: %v", err)
		}
		p := &Process{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), name: name, port: port, cmdFor: cmdFor, logs: &Output{}}
		if lastErr = p.start(); lastErr == nil {
			t.Cleanup(p.Kill)
			return p
		}
	}
	t.Fatalf("emulator: start %s: %v", name, lastErr)
	return nil
}

// start runs the process on p.port and waits until it listens.
func (p *Process) start() error {
	cmd := p.cmdFor(p.port)
	cmd.Stdout = p.logs
	cmd.Stderr = p.logs
	// Held open until Kill; if the test process dies without cleanup, the
	// pipe closes and the emulator exits by itself.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("stdin pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("run %s: %w", cmd, err)
	}
	r := &running{cmd: cmd, stdin: stdin, exited: make(chan error, 1)}
	go func() { r.exited <- cmd.Wait() }()
	deadline := time.Now().Add(startTimeout)
	for {
		conn, err := net.DialTimeout("tcp", p.Addr, 200*time.Millisecond)
		if err == nil {
			_ = conn.Close()
			break
		}
		select {
		case werr := <-r.exited:
			_ = stdin.Close()
			return fmt.Errorf("%s exited (%v): %s", p.name, werr, p.logs.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.kill()
			return fmt.Errorf("%s did not listen on %s within %s: %s", p.name, p.Addr, startTimeout, p.logs.String())
		}
	}
	p.mu.Lock()
	p.run = r
	p.mu.Unlock()
	return nil
}

func (r *running) kill() {
	_ = r.cmd.Process.Signal(syscall.SIGCONT) // a stopped process dies only once resumed
	_ = r.cmd.Process.Kill()
	_ = r.stdin.Close()
	<-r.exited
}

// Stop suspends the process (SIGSTOP): it hangs.
func (p *Process) Stop() error { return p.signal(syscall.SIGSTOP) }

// Continue resumes a stopped process (SIGCONT).
func (p *Process) Continue() error { return p.signal(syscall.SIGCONT) }

func (p *Process) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run == nil {
		return fmt.Errorf("%s is not running", p.name)
	}
	return p.run.cmd.Process.Signal(sig)
}

// Kill ends the process: nothing listens on its port any more.
func (p *Process) Kill() {
	p.mu.Lock()
	r := p.run
	p.run = nil
	p.mu.Unlock()
	if r != nil {
		r.kill()
	}
}

// Restart kills the process if it runs and starts it again on the same
// port.
func (p *Process) Restart() error {
	p.Kill()
	return p.start()
}

// Logs returns what the process printed.
func (p *Process) Logs() string { return p.logs.String() }

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	return port, nil
}

// Output collects a child process's output from two writers (its
// standard output and standard error), safe to read while it runs.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Output) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Output) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
