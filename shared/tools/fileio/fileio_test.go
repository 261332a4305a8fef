package fileio_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/fileio"
	"github.com/toolshed/toolshed/shared/workspace"
)

// deniedPaths try to leave the workspace: each is "Access denied" for
// reading and for writing.
var deniedPaths = []string{
	"..", "../", "../secret.txt", "../bob/secret.txt", "../../etc/passwd",
	"../../../../../../../../etc/passwd", "a/../../x", "a/b/../../../x", "a/..", "a/../b",
	"notes/../my-notes.txt", "./../x", "..//x", "a/..//b", "../workspace/bob/secret.txt",
	"../../workspace/bob/secret.txt", "../alice/../bob/secret.txt",
	"/etc/passwd", "/", "//etc/passwd", "/workspace/bob/secret.txt", "/tmp/x", "//server/share/x",
	"..\\x", "\\etc\\passwd", "a\\..\\..\\x", "\\\\server\\share\\x", "..\\..\\bob\\secret.txt",
	"C:\\Windows\\win.ini", "C:/Windows/win.ini", "c:x", "Z:",
	"x\x00.txt", "\x00", "a/\x00/b", "..\x00/x", "secret.txt\x00.png",
	"a\nb", "a\rb", "a\tb", "\x1b[31mred", "a\x7fb", "a\u0085b", "a\u009bb", "\x01",
	"notes\n/../../x",
}

// malformedPaths are refused as invalid input (they do not leave the
// workspace, they just name no file).
var malformedPaths = []string{
	".", "./x", "a/./b", "a/.", "a/", "notes/", "a//b",
	strings.Repeat("a", 256),
	strings.Repeat("d/", 504) + "x", // key "workspace/alice/" + 1,009 bytes > 1,024
}

// testHostilePaths: every hostile path is refused for reading and writing,
// and afterwards nothing has been written anywhere but where the test put
// it, and bob's file is untouched.
func testHostilePaths(t *testing.T, be backend) {
	e := newEnv(t, be, generous)
	e.write(t, bob, "secret.txt", "bob's secret")
	e.write(t, alice, "my-notes.txt", "alice's notes")
	before := be.stored(t)

	if n := len(deniedPaths) + len(malformedPaths); n < 50 {
		t.Fatalf("only %d hostile paths; the table must have at least 50", n)
	}
	for _, p := range deniedPaths {
		for _, args := range []string{readArgs(p), writeArgs(p, "pwned")} {
			o := e.Call(alice, fileio.ToolName, args)
			if o.OK || o.Error.Code != toolerr.PathNotAllowed || o.Error.Message != "Access denied" || o.Error.Details["reason"] == nil {
				t.Errorf("%s: got %s %+v; want PATH_NOT_ALLOWED \"Access denied\" with a reason", args, o.Result, o.Error)
			}
		}
	}
	for _, p := range malformedPaths {
		for _, args := range []string{readArgs(p), writeArgs(p, "pwned")} {
			o := e.Call(alice, fileio.ToolName, args)
			if o.OK || o.Error.Code != toolerr.InvalidInput || !strings.HasPrefix(o.Error.Message, "path: ") {
				t.Errorf("%.80s: got %s %+v; want INVALID_INPUT about the path", args, o.Result, o.Error)
			}
		}
	}
	if after := be.stored(t); !maps.Equal(after, before) {
		t.Errorf("stored files changed:\n got %q\nwant %q", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
	}
	t.Logf("%d denied and %d malformed paths refused for reading and writing", len(deniedPaths), len(malformedPaths))
}

func testRoundTrip(t *testing.T, be backend) {
	e := newEnv(t, be, generous)
	got := e.write(t, alice, "new-file.txt", "Hello from Adam!")
	if got != (writeResult{OK: true, BytesWritten: 16, Path: "new-file.txt"}) {
		t.Errorf("write: got %+v", got)
	}
	var r readResult
	e.OK(t, alice, fileio.ToolName, readArgs("new-file.txt"), &r)
	if r != (readResult{OK: true, Contents: "Hello from Adam!", Path: "new-file.txt", Bytes: 16}) {
		t.Errorf("read: got %+v", r)
	}
	files := map[string]string{
		"notes/2025/01/today.md": "# Today\n",
		".config/settings.json":  "{}",
		"empty.txt":              "",
		"utf8 ☕/héllo.txt":       "héllo ☕\n",
		"..a/...":                "dots that are names",
		"．．/x":                   "fullwidth dots are a name",
		"%2e%2e/x":               "so are escapes",
	}
	for p, content := range files {
		if got := e.write(t, alice, p, content); got.BytesWritten != len(content) {
			t.Errorf("%s: wrote %d bytes, want %d", p, got.BytesWritten, len(content))
		}
	}
	for p, content := range files {
		if got := e.read(t, alice, p); got != content {
			t.Errorf("%s: read %q, want %q", p, got, content)
		}
	}
	e.write(t, alice, "new-file.txt", "v2")
	if got := e.read(t, alice, "new-file.txt"); got != "v2" {
		t.Errorf("after overwrite: %q, want v2", got)
	}
	stored := be.stored(t)
	for p, content := range files {
		if stored["alice/"+p] != content {
			t.Errorf("stored %q = %q, want %q (every file lands in alice's workspace, as named)", "alice/"+p, stored["alice/"+p], content)
		}
	}
	fails(t, e.Call(alice, fileio.ToolName, readArgs("missing.txt")), toolerr.ResourceNotFound, "File not found", "")
}

func testTenants(t *testing.T, be backend) {
	e := newEnv(t, be, generous)
	e.write(t, alice, "private.txt", "alice only")
	fails(t, e.Call(bob, fileio.ToolName, readArgs("private.txt")), toolerr.ResourceNotFound, "File not found", "")
	e.write(t, bob, "private.txt", "bob only")
	if got := e.read(t, alice, "private.txt"); got != "alice only" {
		t.Errorf("alice reads %q after bob wrote his own file", got)
	}
}

func testInTheWay(t *testing.T, be backend) {
	e := newEnv(t, be, generous)
	e.write(t, alice, "notes", "a file named notes")
	fails(t, e.Call(alice, fileio.ToolName, writeArgs("notes/today.md", "x")), toolerr.InvalidInput, "Failed to write file", "")
	e.write(t, alice, "dir/inside.txt", "x")
	fails(t, e.Call(alice, fileio.ToolName, writeArgs("dir", "x")), toolerr.InvalidInput, "Failed to write file", "the path is a folder")
	fails(t, e.Call(alice, fileio.ToolName, readArgs("dir")), toolerr.ResourceNotFound, "File not found", "")
	fails(t, e.Call(alice, fileio.ToolName, readArgs("notes/today.md")), toolerr.ResourceNotFound, "File not found", "")
	if got := e.read(t, alice, "notes"); got != "a file named notes" {
		t.Errorf("notes: %q", got)
	}
}

func testSizes(t *testing.T, be backend) {
	e := newEnv(t, be, generous)
	limit := 1 << 20
	e.write(t, alice, "max.txt", strings.Repeat("a", limit))
	if got := e.read(t, alice, "max.txt"); len(got) != limit {
		t.Errorf("read %d bytes, want %d", len(got), limit)
	}
	// 524,289 characters pass the schema's limit of 1,048,576; as UTF-8
	// they are 1,048,578 bytes.
	fails(t, e.Call(alice, fileio.ToolName, writeArgs("big.txt", strings.Repeat("é", limit/2+1))),
		toolerr.SizeLimitExceeded, "Content size exceeds limit of 1 MB.", "")

	be.plant(t, alice, "huge.txt", []byte(strings.Repeat("a", limit+1)))
	fails(t, e.Call(alice, fileio.ToolName, readArgs("huge.txt")), toolerr.SizeLimitExceeded, "File size exceeds limit of 1 MB.", "")
	be.plant(t, alice, "latin1.txt", []byte("caf\xe9"))
	fails(t, e.Call(alice, fileio.ToolName, readArgs("latin1.txt")), toolerr.InvalidInput, "Encoding error", "the file is not UTF-8 text")
}

func testQuotas(t *testing.T, be backend) {
	e := newEnv(t, be, workspace.Quota{Bytes: 100, Files: 3})
	e.write(t, alice, "a.txt", strings.Repeat("a", 40))
	e.write(t, alice, "b.txt", strings.Repeat("b", 40))
	overBytes := e.Call(alice, fileio.ToolName, writeArgs("c.txt", strings.Repeat("c", 21)))
	fails(t, overBytes, toolerr.SizeLimitExceeded, "Failed to write file",
		"workspace quota exceeded: 80 of 100 bytes stored, this write needs 21 more")
	e.write(t, alice, "c.txt", strings.Repeat("c", 20)) // exactly 100 bytes
	fails(t, e.Call(alice, fileio.ToolName, writeArgs("d.txt", "")), toolerr.SizeLimitExceeded, "Failed to write file",
		"workspace quota exceeded: 3 files of 3 already stored")
	e.write(t, alice, "a.txt", "shrunk")                // overwriting adds no file and frees bytes
	e.write(t, alice, "b.txt", strings.Repeat("b", 74)) // back to exactly 100
	fails(t, e.Call(alice, fileio.ToolName, writeArgs("b.txt", strings.Repeat("b", 75))), toolerr.SizeLimitExceeded, "Failed to write file", "")
	// Quotas are per tenant.
	for _, p := range []string{"x", "y", "z"} {
		e.write(t, bob, p, strings.Repeat(p, 33))
	}
	if got := e.read(t, alice, "b.txt"); got != strings.Repeat("b", 74) {
		t.Errorf("a refused write changed the file: %q", got)
	}
}

// testEveryNameIsTheTenants: names that look like the server's own
// (temporary files of earlier versions, its staging folder) are a tenant's
// files like any other: accepted, counted against the quota, readable, and
// still there, whole, after a restart.
func testEveryNameIsTheTenants(t *testing.T, be backend) {
	quota := workspace.Quota{Bytes: 3 << 10, Files: 3}
	e := newEnv(t, be, quota)
	names := []string{"d0/.toolshed-0000000000000000.tmp", ".toolshed-tmp/x.txt", workspace.Staging + "/y.txt"}
	for i, p := range names {
		e.write(t, alice, p, strings.Repeat(string(rune('a'+i)), 1000))
	}
	fails(t, e.Call(alice, fileio.ToolName, writeArgs("d1/.toolshed-0123456789abcdef.tmp", "x")), toolerr.SizeLimitExceeded,
		"Failed to write file", "workspace quota exceeded: 3 files of 3 already stored")
	restarted := newEnvOver(t, be, be.restart(t, quota))
	for i, p := range names {
		if got := restarted.read(t, alice, p); got != strings.Repeat(string(rune('a'+i)), 1000) {
			t.Errorf("%s after a restart: %d bytes %.10q", p, len(got), got)
		}
	}
	if got, want := len(be.stored(t)), len(names); got != want {
		t.Errorf("%d files stored after a restart: %v; want the %d written", got, slices.Sorted(maps.Keys(be.stored(t))), want)
	}
}

// testConcurrentWriters: 100 writers replace one file at once while
// readers keep reading it. Every read, and the file at the end, is one
// writer's whole version.
func testConcurrentWriters(t *testing.T, be backend) {
	e := newEnv(t, be, generous)
	// 40 writers of 32 KiB, each within file-io's deadline, against
	// moto_server (single-threaded) while the other test packages run:
	// 100 made a writer miss its deadline on a loaded 2-core CI machine.
	const writers = 40
	version := func(i int) string {
		return fmt.Sprintf("version %03d\n", i) + strings.Repeat(string(rune('A'+i%26)), 32<<10)
	}
	check := func(got string) {
		var i int
		if _, err := fmt.Sscanf(got, "version %03d\n", &i); err != nil || i < 0 || i >= writers || got != version(i) {
			t.Errorf("read %d bytes starting %.20q: not one writer's whole version", len(got), got)
		}
	}
	e.write(t, alice, "shared.txt", version(0))

	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				var r readResult
				o := e.Call(alice, fileio.ToolName, readArgs("shared.txt"))
				if !o.OK {
					t.Errorf("read during writes: %+v", o.Error)
					return
				}
				if err := jsonDecode(o.Result, &r); err != nil {
					t.Error(err)
					return
				}
				check(r.Contents)
			}
		}()
	}
	var writes sync.WaitGroup
	for i := range writers {
		writes.Add(1)
		go func() {
			defer writes.Done()
			if o := e.Call(alice, fileio.ToolName, writeArgs("shared.txt", version(i))); !o.OK {
				t.Errorf("writer %d: %+v", i, o.Error)
			}
		}()
	}
	writes.Wait()
	close(done)
	wg.Wait()
	check(e.read(t, alice, "shared.txt"))
	stored := be.stored(t)
	if len(stored) != 1 {
		t.Errorf("stored %q; want only alice/shared.txt (no temporary files left)", slices.Sorted(maps.Keys(stored)))
	}
}
