// Package localrun runs the local server (the gateway binary, what `make
// run` starts) as a process for benchmarks: built from the working tree,
// serving a repository with its data in a folder of its own, on a free
// loopback port, with auth off. A benchmark calls its tools over /v1,
// waits for its code indexes through /healthz, and reads its memory and
// CPU time with procstat.
package localrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/testenv/ripgrep"
)

// Build builds the gateway binary into dir and returns its path. It runs
// from the repository's root (the benchmarks' working directory).
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "toolshed")
	if out, err := exec.Command("go", "build", "-o", bin, "./functions/gateway").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the local server: %v\n%s", err, out)
	}
	return bin, nil
}

// Options say what a server serves.
type Options struct {
	Bin  string // the gateway binary (Build)
	Repo string // the repository it serves (-repo)
	Data string // its data directory (-data); its output goes to Data+".log"
	// Unlimited are the tools measured: their rate limit is lifted.
	Unlimited []string
}

// Server is a running local server.
type Server struct {
	Addr    string    // host:port on loopback
	Started time.Time // when the process started

	cmd     *exec.Cmd
	logPath string
	client  *http.Client
}

// UnlimitedRates is the value of config.RateLimits that lets a benchmark
// call tools as fast as it can: a billion calls a minute each.
func UnlimitedRates(tools ...string) string {
	limits := make([]string, len(tools))
	for i, tool := range tools {
		limits[i] = tool + "=1000000000"
	}
	return strings.Join(limits, ",")
}

// Start starts a server on a free loopback port with auth off. It does
// not wait: see WaitIndexed, or call a tool until it answers.
func Start(o Options) (*Server, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: addr, logPath: o.Data + ".log", client: &http.Client{Timeout: 2 * time.Minute}}
	logs, err := os.Create(s.logPath)
	if err != nil {
		return nil, fmt.Errorf("the local server's log: %w", err)
	}
	defer logs.Close() // the process has its own descriptor
	s.cmd = exec.Command(o.Bin, "-addr", addr, "-repo", o.Repo, "-data", o.Data)
	s.cmd.Env = append(os.Environ(), config.Auth.Name()+"="+string(config.AuthOff),
		config.RateLimits.Name()+"="+UnlimitedRates(o.Unlimited...))
	s.cmd.Stdout, s.cmd.Stderr = logs, logs
	s.Started = time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the local server: %w", err)
	}
	return s, nil
}

// Stop ends the server.
func (s *Server) Stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// Pid is the server's process id, for procstat.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Logs is everything the server wrote so far.
func (s *Server) Logs() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return string(b)
}

// Answer is a /v1 answer: {"tool","ok","result"} or {"ok":false,"code",...}.
type Answer struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Code   string          `json:"code"`
	Error  string          `json:"error"`
}

// Call calls tool with args over POST /v1/tools/{tool}. A failure of the
// tool is an Answer with OK false, not an error.
func (s *Server) Call(tool string, args any) (Answer, error) {
	body, err := json.Marshal(map[string]any{"args": args})
	if err != nil {
		return Answer{}, fmt.Errorf("encode %s arguments: %w", tool, err)
	}
	resp, err := s.client.Post("http://"+s.Addr+"/v1/tools/"+tool, "application/json", bytes.NewReader(body))
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return Answer{}, fmt.Errorf("read the %s answer: %w", tool, err)
	}
	var a Answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return Answer{}, fmt.Errorf("decode the %s answer %.200s: %w", tool, raw, err)
	}
	return a, nil
}

// Grep calls grep_codebase for a class and returns its count of matching
// lines; a failure of the tool is an error.
func (s *Server) Grep(c ripgrep.Class) (int, error) {
	a, err := s.Call("grep_codebase", c.Args())
	if err != nil {
		return 0, err
	}
	if !a.OK {
		return 0, fmt.Errorf("grep_codebase %q: %s: %s", c.Pattern, a.Code, a.Error)
	}
	return ripgrep.TotalMatches(a.Result)
}

// CodeIndex is how far one of the server's code indexes is (GET /healthz).
type CodeIndex struct {
	State        string `json:"state"` // building or ready
	FilesIndexed int    `json:"filesIndexed"`
	FilesTotal   int    `json:"filesTotal"`
	Chunks       int    `json:"chunks"`
}

// CodeIndexes returns the code indexes /healthz reports.
func (s *Server) CodeIndexes() ([]CodeIndex, error) {
	resp, err := s.client.Get("http://" + s.Addr + "/healthz")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var health struct {
		CodeIndexes []CodeIndex `json:"codeIndexes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&health); err != nil {
		return nil, fmt.Errorf("decode /healthz: %w", err)
	}
	return health.CodeIndexes, nil
}

// WaitIndexed polls /healthz every poll until the server reports its code
// indexes, all ready, and returns them. It gives up after limit.
func (s *Server) WaitIndexed(poll, limit time.Duration) ([]CodeIndex, error) {
	deadline := time.Now().Add(limit)
	for {
		indexes, err := s.CodeIndexes()
		if err == nil && allReady(indexes) {
			return indexes, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the code index was not ready after %s (last: %+v, %v)\n%s", limit, indexes, err, tail(s.Logs(), 4000))
		}
		time.Sleep(poll)
	}
}

func allReady(indexes []CodeIndex) bool {
	for _, ix := range indexes {
		if ix.State != "ready" {
			return false
		}
	}
	return len(indexes) > 0
}

// tail is the last n bytes of s.
func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// FreeAddr returns a loopback address whose port was free a moment ago.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
