// Command benchmcp (make bench-mcp) measures Toolshed's local server next to
// a bare go-sdk server (scripts/benchmcp/bare) with the same hello tool, in
// one run, under the same load from wrk:
//
//   - MCP tools/call hello at 1 connection (p50 latency) and at 32
//     connections (throughput), on both servers;
//   - POST /v1/tools/hello at 32 connections on Toolshed;
//   - process start to ready (first answer on a TCP connection), median of
//     many starts;
//   - each server's idle RSS and the memory a load adds to it: a fresh
//     process answers one call and settles (its idle RSS), then takes
//     MCP tools/call at 32 or 256 connections; the load adds its peak RSS
//     (VmHWM) minus the idle RSS;
//   - each server's peak RSS under the loads, and Toolshed's after the worst
//     inputs it accepts: bodies at the 4 MiB limit on every route and the
//     largest diff_baseline baseline, four at a time.
//
// Toolshed runs its full pipeline: validation, rate limiting (limits raised
// so nothing is refused) and its per-call log line; it serves an empty
// repository, so that no index is built in the background of the
// measurements. Each measurement alternates between the servers over
// several rounds and keeps the median, so background load hits both alike.
// It prints a table, the ratios and whether the targets of issues 6 and 25
// are met, and exits 1 when one is not.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/testenv/localrun"
	"github.com/toolshed/toolshed/shared/testenv/procstat"
)

// call is the tools/call request both servers answer.
const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"World"}}}`

// wrkScript makes wrk POST body with the headers an MCP client sends.
const wrkScript = `wrk.method = "POST"
wrk.body = %q
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Protocol-Version"] = "2025-06-18"
`

// Targets (issue 6, point 9; issue 25, point 7).
const (
	maxP50Ratio1    = 1.25 // Toolshed p50 at 1 connection ≤ 1.25× bare
	minRateRatio32  = 1.0  // Toolshed MCP req/s at 32 connections ≥ 1.0× bare
	minV1RateRatio  = 2.0  // Toolshed /v1 req/s ≥ 2× bare MCP req/s
	maxStartReadyMs = 15.0 // Toolshed start to ready
	maxAddedRatio   = 1.5  // the memory a load adds to Toolshed ≤ 1.5× what it adds to bare
)

// memoryLoads are the connection counts whose added memory is measured.
var memoryLoads = []int{32, 256}

func main() {
	duration := flag.Duration("d", 5*time.Second, "length of each wrk run")
	rounds := flag.Int("rounds", 3, "rounds per measurement (the median is kept)")
	starts := flag.Int("starts", 21, "process starts for the start-to-ready median")
	flag.Parse()
	if err := run(*duration, *rounds, *starts); err != nil {
		fmt.Fprintln(os.Stderr, "bench-mcp:", err)
		os.Exit(1)
	}
}

// server is one program under test.
type server struct {
	name string
	bin  string
	args func(addr string) []string
	env  []string
	path string // MCP path
	cmd  *exec.Cmd
	addr string
}

func run(duration time.Duration, rounds, starts int) error {
	if _, err := exec.LookPath("wrk"); err != nil {
		return errors.New("wrk is not installed: apt-get install -y wrk (make bench-mcp does it)")
	}
	dir, err := os.MkdirTemp("", "benchmcp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bare, toolshed, err := buildServers(dir)
	if err != nil {
		return err
	}
	fmt.Printf("bench-mcp: %s per run, median of %d rounds, GOMAXPROCS of the servers = cores (%s)\n\n", duration, rounds, cores())
	m, err := measureAll(bare, toolshed, dir, duration, rounds, starts)
	if err != nil {
		return err
	}
	m.print()
	fmt.Println()
	if !m.meetTargets() {
		return errors.New("a target was missed")
	}
	return nil
}

// buildServers builds both servers into dir: Toolshed's gateway, and the
// bare server in its own module (scripts/benchmcp/bare/go.mod), on the
// go-sdk's dependencies as released.
func buildServers(dir string) (bare, toolshed *server, err error) {
	for src, out := range map[string]string{"functions/gateway": "toolshed", "scripts/benchmcp/bare": "bare"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, out), ".")
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, nil, fmt.Errorf("build %s: %v\n%s", src, err, out)
		}
	}
	empty := filepath.Join(dir, "empty-repo")
	if err := os.Mkdir(empty, 0o755); err != nil {
		return nil, nil, err
	}
	bare = &server{name: "bare go-sdk", bin: filepath.Join(dir, "bare"), path: "/",
		args: func(addr string) []string { return []string{"-addr", addr} }}
	toolshed = &server{name: "toolshed", bin: filepath.Join(dir, "toolshed"), path: "/mcp",
		args: func(addr string) []string { // a data directory per process: bolt allows one
			data := filepath.Join(dir, "data-"+strings.ReplaceAll(addr, ":", "-"))
			return []string{"-addr", addr, "-data", data, "-repo", empty}
		},
		env: []string{config.RateLimits.Name() + "=" + localrun.UnlimitedRates("hello"), config.LogLevel.Name() + "=info"}}
	return bare, toolshed, nil
}

// load is what wrk measured of one load: req/s, and the p50 and p99
// latency in ms.
type load struct{ rate, p50, p99 float64 }

// memory is what MCP tools/call at some connections does to a fresh
// server's memory: its RSS idle (after one call), the peak RSS under the
// load minus that, and the load's req/s.
type memory struct {
	idle, added int64
	rate        float64
}

// measurements is all that run measures of both servers.
type measurements struct {
	bare1, toolshed1, bare32, toolshed32 load // MCP tools/call at 1 and 32 connections
	v1at32                               load // Toolshed's /v1 at 32 connections
	startBare, startToolshed             float64
	rssBare, rssToolshed, rssWorst       int64
	worst                                string   // what worstInputs sent
	memBare, memToolshed                 []memory // at each of memoryLoads
}

// measureAll measures both servers: start to ready, then each load
// alternating over rounds of duration, then peak memory under the load and
// after the worst inputs. dir holds wrk's scripts.
func measureAll(bare, toolshed *server, dir string, duration time.Duration, rounds, starts int) (m measurements, err error) {
	if m.startBare, err = startToReady(bare, starts); err != nil {
		return m, err
	}
	if m.startToolshed, err = startToReady(toolshed, starts); err != nil {
		return m, err
	}
	for _, s := range []*server{bare, toolshed} {
		if err := s.start(); err != nil {
			return m, err
		}
		defer s.stop()
	}
	script, v1Script, err := writeScripts(dir)
	if err != nil {
		return m, err
	}
	for _, l := range []struct {
		out    *load
		s      *server
		path   string
		script string
		conns  int
	}{
		{&m.bare1, bare, bare.path, script, 1}, {&m.toolshed1, toolshed, toolshed.path, script, 1},
		{&m.bare32, bare, bare.path, script, 32}, {&m.toolshed32, toolshed, toolshed.path, script, 32},
		{&m.v1at32, toolshed, "/v1/tools/hello", v1Script, 32},
	} {
		if *l.out, err = measureLoad(l.s, l.path, l.script, l.conns, rounds, duration); err != nil {
			return m, err
		}
	}
	m.rssBare, _ = procstat.PeakRSS(bare.cmd.Process.Pid)
	m.rssToolshed, _ = procstat.PeakRSS(toolshed.cmd.Process.Pid)
	if m.worst, err = worstInputs(toolshed); err != nil {
		return m, err
	}
	m.rssWorst, _ = procstat.PeakRSS(toolshed.cmd.Process.Pid)
	for _, conns := range memoryLoads {
		b, t, err := measureMemory(bare, toolshed, script, conns, rounds, duration)
		if err != nil {
			return m, err
		}
		m.memBare, m.memToolshed = append(m.memBare, b), append(m.memToolshed, t)
	}
	return m, nil
}

// measureMemory measures what MCP tools/call at conns connections does to
// the memory of each server, alternating between them over rounds, each
// round on fresh processes: one call, a second to settle, the idle RSS;
// then the load for d, and its peak RSS (VmHWM) minus the idle RSS. It
// keeps the medians.
func measureMemory(bare, toolshed *server, script string, conns, rounds int, d time.Duration) (b, t memory, err error) {
	var idles, addeds, rates [2][]float64
	for range rounds {
		for i, s := range []*server{bare, toolshed} {
			mem, err := memoryOnce(*s, script, conns, d)
			if err != nil {
				return b, t, fmt.Errorf("%s at %d connections: %w", s.name, conns, err)
			}
			idles[i] = append(idles[i], float64(mem.idle))
			addeds[i] = append(addeds[i], float64(mem.added))
			rates[i] = append(rates[i], mem.rate)
		}
	}
	med := func(i int) memory {
		return memory{idle: int64(median(idles[i])), added: int64(median(addeds[i])), rate: median(rates[i])}
	}
	return med(0), med(1), nil
}

// memoryOnce runs a fresh process of s (a copy, started here) through one
// measurement of measureMemory.
func memoryOnce(s server, script string, conns int, d time.Duration) (memory, error) {
	if err := s.start(); err != nil {
		return memory{}, err
	}
	defer s.stop()
	if err := callOnce(s.addr, s.path); err != nil {
		return memory{}, err
	}
	time.Sleep(time.Second)
	pid := s.cmd.Process.Pid
	idle, err := procstat.RSS(pid)
	if err != nil {
		return memory{}, err
	}
	l, err := wrk(s.addr, s.path, script, conns, d)
	if err != nil {
		return memory{}, err
	}
	peak, err := procstat.PeakRSS(pid)
	if err != nil {
		return memory{}, err
	}
	return memory{idle: idle, added: peak - idle, rate: l.rate}, nil
}

// callOnce sends one tools/call hello to the server at addr.
func callOnce(addr, path string) error {
	req, err := http.NewRequest("POST", "http://"+addr+path, strings.NewReader(call))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("a first call: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("a first call answered %s", resp.Status)
	}
	return nil
}

// writeScripts writes wrk's scripts into dir: the MCP tools/call and the
// /v1 call of hello.
func writeScripts(dir string) (mcp, v1 string, err error) {
	mcp = filepath.Join(dir, "call.lua")
	if err := os.WriteFile(mcp, fmt.Appendf(nil, wrkScript, call), 0o644); err != nil {
		return "", "", err
	}
	v1 = filepath.Join(dir, "v1.lua")
	if err := os.WriteFile(v1, fmt.Appendf(nil, wrkScript, `{"args":{"name":"World"}}`), 0o644); err != nil {
		return "", "", err
	}
	return mcp, v1, nil
}

// measureLoad runs one load on s rounds times and keeps the medians.
func measureLoad(s *server, path, script string, conns, rounds int, duration time.Duration) (load, error) {
	var rates, p50s, p99s []float64
	for range rounds {
		r, err := wrk(s.addr, path, script, conns, duration)
		if err != nil {
			return load{}, fmt.Errorf("%s: %w", s.name, err)
		}
		rates, p50s, p99s = append(rates, r.rate), append(p50s, r.p50), append(p99s, r.p99)
	}
	return load{median(rates), median(p50s), median(p99s)}, nil
}

// print prints the table of measurements, with Toolshed's ratio to bare.
func (m measurements) print() {
	fmt.Printf("%-36s %14s %14s %8s\n", "measure", "bare go-sdk", "toolshed", "ratio")
	row := func(name string, b, t float64, unit string) {
		fmt.Printf("%-36s %11.2f %-2s %11.2f %-2s %7.2fx\n", name, b, unit, t, unit, t/b)
	}
	row("MCP tools/call, 1 conn: req/s", m.bare1.rate, m.toolshed1.rate, "")
	row("MCP tools/call, 1 conn: p50", m.bare1.p50, m.toolshed1.p50, "ms")
	row("MCP tools/call, 1 conn: p99", m.bare1.p99, m.toolshed1.p99, "ms")
	row("MCP tools/call, 32 conns: req/s", m.bare32.rate, m.toolshed32.rate, "")
	row("MCP tools/call, 32 conns: p50", m.bare32.p50, m.toolshed32.p50, "ms")
	row("MCP tools/call, 32 conns: p99", m.bare32.p99, m.toolshed32.p99, "ms")
	row("/v1/tools/hello, 32 conns: req/s", m.bare32.rate, m.v1at32.rate, "")
	row("start to ready (median)", m.startBare, m.startToolshed, "ms")
	row("peak RSS", float64(m.rssBare)/(1<<20), float64(m.rssToolshed)/(1<<20), "MB")
	fmt.Printf("%-36s %14s %11.2f MB  (%s)\n", "peak RSS after the worst inputs", "", float64(m.rssWorst)/(1<<20), m.worst)
	row("idle RSS (fresh, after one call)", mib(m.memBare[0].idle), mib(m.memToolshed[0].idle), "MB")
	for i, conns := range memoryLoads {
		row(fmt.Sprintf("memory a load adds, %d conns", conns), mib(m.memBare[i].added), mib(m.memToolshed[i].added), "MB")
		row(fmt.Sprintf("  (that load's req/s, %d conns)", conns), m.memBare[i].rate, m.memToolshed[i].rate, "")
	}
}

// mib is bytes in MiB.
func mib(n int64) float64 { return float64(n) / (1 << 20) }

// meetTargets prints whether each target is met, and reports whether all
// are.
func (m measurements) meetTargets() bool {
	ok := true
	check := func(name string, pass bool, got string) {
		mark := "PASS"
		if !pass {
			mark, ok = "FAIL", false
		}
		fmt.Printf("%s  %-52s %s\n", mark, name, got)
	}
	b1, t1, b32, t32, v32 := m.bare1, m.toolshed1, m.bare32, m.toolshed32, m.v1at32
	check(fmt.Sprintf("p50 at 1 conn ≤ %.2f× bare", maxP50Ratio1), t1.p50 <= maxP50Ratio1*b1.p50, fmt.Sprintf("%.2fx", t1.p50/b1.p50))
	check(fmt.Sprintf("MCP req/s at 32 conns ≥ %.1f× bare", minRateRatio32), t32.rate >= minRateRatio32*b32.rate, fmt.Sprintf("%.2fx", t32.rate/b32.rate))
	check(fmt.Sprintf("/v1 req/s ≥ %.1f× bare MCP req/s", minV1RateRatio), v32.rate >= minV1RateRatio*b32.rate, fmt.Sprintf("%.2fx", v32.rate/b32.rate))
	check(fmt.Sprintf("start to ready ≤ %.0f ms", maxStartReadyMs), m.startToolshed <= maxStartReadyMs, fmt.Sprintf("%.1f ms", m.startToolshed))
	for i, conns := range memoryLoads {
		b, t := m.memBare[i].added, m.memToolshed[i].added
		check(fmt.Sprintf("memory added at %d conns ≤ %.1f× bare", conns, maxAddedRatio), float64(t) <= maxAddedRatio*float64(b),
			fmt.Sprintf("%.2fx", float64(t)/float64(b)))
	}
	return ok
}

// worstInputs sends the largest requests Toolshed accepts, four at a time:
// a body just under the 4 MiB limit to each route, and the largest
// diff_baseline baseline (256 KiB of packages). It returns a summary.
func worstInputs(s *server) (string, error) {
	huge := strings.Repeat("a", 4<<20-200)
	var baseline strings.Builder
	baseline.WriteString(`{"command":"diff_baseline","baseline":{"packages":[`)
	for i := 0; baseline.Len() < 256<<10-100; i++ {
		if i > 0 {
			baseline.WriteString(",")
		}
		fmt.Fprintf(&baseline, `"pkg%06d==1"`, i)
	}
	baseline.WriteString(`]}}`)
	bodies := []struct{ path, body string }{
		{"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"` + huge + `"}}}`},
		{"/v1/tools/hello", `{"args":{"name":"` + huge + `"}}`},
		{"/mcp/tool/hello", `{"name":"` + huge + `"}`},
		{"/v1/tools/sys-audit", `{"args":` + baseline.String() + `}`},
	}
	client := &http.Client{Timeout: time.Minute}
	sent := 0
	for round := 0; round < 5; round++ {
		for _, b := range bodies {
			errs := make(chan error, 4)
			for range 4 {
				go func() {
					req, _ := http.NewRequest("POST", "http://"+s.addr+b.path, strings.NewReader(b.body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					resp, err := client.Do(req)
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					errs <- err
				}()
			}
			for range 4 {
				if err := <-errs; err != nil {
					return "", fmt.Errorf("worst input to %s: %w", b.path, err)
				}
				sent++
			}
		}
	}
	return fmt.Sprintf("%d requests: 4 MiB bodies on each route and 256 KiB baselines, 4 at a time", sent), nil
}

// start runs the server on a free loopback port and waits until it answers.
func (s *server) start() error {
	addr, err := localrun.FreeAddr()
	if err != nil {
		return err
	}
	s.addr = addr
	s.cmd = exec.Command(s.bin, s.args(addr)...)
	s.cmd.Env = append(os.Environ(), s.env...)
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.name, err)
	}
	return waitReady(addr, 10*time.Second)
}

func (s *server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}

// startToReady starts the server n times and returns the median time from
// starting the process to its first accepted connection, in ms.
func startToReady(s *server, n int) (float64, error) {
	var ms []float64
	for range n {
		addr, err := localrun.FreeAddr()
		if err != nil {
			return 0, err
		}
		cmd := exec.Command(s.bin, s.args(addr)...)
		cmd.Env = append(os.Environ(), s.env...)
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		err = waitReady(addr, 10*time.Second)
		ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
		cmd.Process.Kill()
		cmd.Wait()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return median(ms), nil
}

// waitReady polls addr until it accepts a TCP connection.
func waitReady(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not accept connections within %s", addr, limit)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

var (
	rateRe = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	p50Re  = regexp.MustCompile(`\n\s+50%\s+([\d.]+)(us|ms|s)`)
	p99Re  = regexp.MustCompile(`\n\s+99%\s+([\d.]+)(us|ms|s)`)
	non2xx = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
)

// wrk runs one load and returns req/s and the p50 and p99 latency in ms.
func wrk(addr, path, script string, conns int, d time.Duration) (load, error) {
	var r load
	threads := min(conns, 2)
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "wrk", "-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns),
		"-d", d.String(), "--latency", "-s", script, "http://"+addr+path).CombinedOutput()
	if err != nil {
		return r, fmt.Errorf("wrk: %v\n%s", err, out)
	}
	if m := non2xx.FindSubmatch(out); m != nil {
		return r, fmt.Errorf("%s responses were not 2xx:\n%s", m[1], out)
	}
	m := rateRe.FindSubmatch(out)
	p50 := p50Re.FindSubmatch(out)
	p99 := p99Re.FindSubmatch(out)
	if m == nil || p50 == nil || p99 == nil {
		return r, fmt.Errorf("cannot read wrk's output:\n%s", out)
	}
	r.rate, _ = strconv.ParseFloat(string(m[1]), 64)
	r.p50 = toMs(string(p50[1]), string(p50[2]))
	r.p99 = toMs(string(p99[1]), string(p99[2]))
	return r, nil
}

func toMs(v, unit string) float64 {
	f, _ := strconv.ParseFloat(v, 64)
	switch unit {
	case "us":
		return f / 1000
	case "s":
		return f * 1000
	}
	return f
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func cores() string {
	out, err := exec.Command("nproc").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}
