// Package emulator runs local stand-ins for AWS services as child processes
// in tests: dynalite (DynamoDB, npm) through package dynamotest, and
// moto_server (S3 and more, Python) through Moto. Each runs on a free
// loopback port, is killed when the test ends, and exits by itself when the
// test process dies (it watches its standard input, which only the test
// holds open). A missing emulator fails the test: it is never skipped.
package emulator

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
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
	var lastErr error
	for range 3 {
		addr, err := start(t, name, cmdFor)
		if err == nil {
			return addr
		}
		lastErr = err
	}
	t.Fatalf("emulator: start %s: %v", name, lastErr)
	return ""
}

func start(t testing.TB, name string, cmdFor func(port int) *exec.Cmd) (string, error) {
	port, err := FreePort()
	if err != nil {
		return "", err
	}
	cmd := cmdFor(port)
	var out syncBuffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	// Held open until stop; if the test process dies without cleanup, the
	// pipe closes and the emulator exits by itself.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", fmt.Errorf("stdin pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("run %s: %w", cmd, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		_ = stdin.Close()
		<-exited
	}

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(startTimeout)
	for {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = conn.Close()
			break
		}
		select {
		case werr := <-exited:
			_ = stdin.Close()
			return "", fmt.Errorf("%s exited (%v): %s", name, werr, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", fmt.Errorf("%s did not listen on %s within %s: %s", name, addr, startTimeout, out.String())
		}
	}
	t.Cleanup(stop)
	return addr, nil
}

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

// syncBuffer collects a process's output from two writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
