//go:build linux

package sciprun

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sourcegraph/scip/bindings/go/scip"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"
)

// The test binary doubles as a stand-in for the Go indexer: run as
// "standin MODE -o OUT DIR [patterns]" (the command line Runner.GoIndexer
// makes), it behaves as MODE says instead of running the tests.
func TestMain(m *testing.M) {
	if len(os.Args) >= 6 && os.Args[1] == "standin" {
		os.Exit(standin(os.Args[2], os.Args[4], os.Args[5]))
	}
	os.Exit(m.Run())
}

// standinRunner returns a Runner whose Go indexer is the stand-in in mode.
func standinRunner(t *testing.T, mode string) Runner {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Runner{GoIndexer: []string{self, "standin", mode}}
}

// standinLimit is where the stand-ins that allocate or write without end
// stop by themselves, so that a limit that does not hold fails the test
// instead of the machine.
const standinLimit = 4 << 30

// standin behaves as mode says, writing to out (a SCIP index, or the
// environment) for the project at dir:
//   - scip: writes a valid index of one document, dir's main.go
//   - env: writes its environment, a variable a line, STDIN=/dev/null
//     when its stdin is that, its niceness (NICE=10) and the patterns it
//     was given (PATTERNS=./a ./b)
//   - sleep: sleeps an hour
//   - hog: allocates memory and touches it
//   - flood: writes to out without end
//   - fork, escape: starts a child that sleeps (escape: in a session of its
//     own, outside the process group), writes its pid to dir/child.pid,
//     then writes a valid index and exits
//   - crash: panics
func standin(mode, out, dir string) int {
	switch mode {
	case "scip":
		return writeStandinIndex(out)
	case "env":
		lines := append(os.Environ(), "STDIN="+stdin(), "NICE="+niceness(), "PATTERNS="+strings.Join(os.Args[6:], " "))
		return exitCode(os.WriteFile(out, []byte(strings.Join(lines, "\n")), 0o644))
	case "sleep":
		time.Sleep(time.Hour)
	case "hog":
		var held [][]byte
		for n := 0; n < standinLimit; n += 16 << 20 {
			b := make([]byte, 16<<20)
			for i := range b {
				b[i] = 1
			}
			held = append(held, b)
		}
		fmt.Println("allocated", len(held)*16, "MB without being stopped")
	case "flood":
		return exitCode(flood(out))
	case "fork", "escape":
		if err := startChild(dir, mode == "escape"); err != nil {
			return exitCode(err)
		}
		return writeStandinIndex(out)
	case "crash":
		panic("stand-in crash")
	}
	return 3
}

func exitCode(err error) int {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// writeStandinIndex writes a SCIP index of one document defining one
// symbol.
func writeStandinIndex(out string) int {
	index := &scip.Index{
		Metadata: &scip.Metadata{ToolInfo: &scip.ToolInfo{Name: "standin"}, ProjectRoot: "file:///standin"},
		Documents: []*scip.Document{{RelativePath: "main.go", Language: "go", Occurrences: []*scip.Occurrence{{
			Range: []int32{2, 5, 9}, Symbol: "scip-go gomod example.com/standin v1 `example.com/standin`/main().",
			SymbolRoles: int32(scip.SymbolRole_Definition),
		}}}},
	}
	data, err := proto.Marshal(index)
	if err == nil {
		err = os.WriteFile(out, data, 0o644)
	}
	return exitCode(err)
}

// flood writes to out in 1 MB writes until standinLimit.
func flood(out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for n := 0; n < standinLimit; n += len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			return err
		}
	}
	return nil
}

// startChild starts the stand-in sleeping and writes its pid to
// dir/child.pid.
func startChild(dir string, ownSession bool) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.Command(self, "standin", "sleep", "-o", os.DevNull, dir)
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: ownSession}
	if err := child.Start(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "child.pid"), []byte(fmt.Sprint(child.Process.Pid)), 0o644)
}

// stdin returns os.DevNull when the standard input is that, else "other".
func stdin() string {
	in, err := os.Stdin.Stat()
	null, nullErr := os.Stat(os.DevNull)
	if err == nil && nullErr == nil && os.SameFile(in, null) {
		return os.DevNull
	}
	return "other"
}

// niceness returns this process's niceness.
func niceness() string {
	// getpriority's system call answers 20 - nice (never negative).
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		return err.Error()
	}
	return strconv.Itoa(20 - prio)
}
