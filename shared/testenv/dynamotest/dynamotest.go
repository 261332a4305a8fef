// Package dynamotest runs a local DynamoDB emulator (dynalite, installed by
// `npm ci` at the repo root) for tests, and makes clients and fresh tables
// on it.
//
//	srv := dynamotest.Start(t)      // one node process, killed at cleanup
//	stores := srv.Stores(t)         // fresh uniquely named tables
//
// A missing node or dynalite fails the test: it is never skipped.
package dynamotest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// dynaliteCLI is the package's "bin" entry (node_modules/dynalite/package.json).
const dynaliteCLI = "node_modules/dynalite/cli.js"

// exitOnStdinEOF is the node script that runs the dynalite CLI (argv[1]) and
// exits when its standard input closes, so an orphaned emulator never
// outlives the test process. The CLI reads its flags from argv[2:].
// dynalite throws on a request its client aborted (a caller giving up on a
// stalled attempt, as fault tests make them), which would end the process:
// that one error is ignored, as DynamoDB itself shrugs it off.
const exitOnStdinEOF = `process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
process.on('uncaughtException', (err) => {
  if (err && err.code === 'ECONNRESET') return;
  console.error(err);
  process.exit(1);
});
require(process.argv[1]);`

// Server is a running dynalite process.
type Server struct {
	// Endpoint is the base URL, e.g. http://127.0.0.1:40123.
	Endpoint string
	// Process controls it (fault tests hang, kill and restart it).
	Process *emulator.Process
}

// Start runs dynalite on a free loopback port, in memory, and stops it
// when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartAt(t, "")
}

// StartAt is Start keeping the tables in the folder dir ("" for memory),
// so that they survive a restart of the process.
func StartAt(t testing.TB, dir string) *Server {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatalf("dynamotest: %v", err)
	}
	node := emulator.Node(t, "dynamotest", root, "dynalite")
	cli := filepath.Join(root, dynaliteCLI)
	proc := emulator.StartProcess(t, "dynalite", func(port int) *exec.Cmd {
		args := []string{"-e", exitOnStdinEOF, cli,
			"--host", "127.0.0.1",
			"--port", strconv.Itoa(port),
			"--createTableMs", "0",
			"--deleteTableMs", "0",
			"--updateTableMs", "0",
		}
		if dir != "" {
			args = append(args, "--path", dir)
		}
		return exec.Command(node, args...)
	})
	return &Server{Endpoint: "http://" + proc.Addr, Process: proc}
}

// RepoRoot walks up from the working directory to the folder holding both
// go.mod and package.json.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repo root: %w", err)
	}
	for {
		if exists(filepath.Join(dir, "go.mod")) && exists(filepath.Join(dir, "package.json")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find repo root: no parent folder holds both go.mod and package.json")
		}
		dir = parent
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// NewClient returns a DynamoDB client for endpoint configured as
// emulator.ClientConfig says, but with the SDK's standard retries (3
// attempts), as deployed functions have: on a loaded machine the emulator
// may drop a connection, which production code retries too. optFns may change any option.
func NewClient(endpoint string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	httpClient := awshttp.NewBuildableClient().
		WithTimeout(30 * time.Second).
		WithTransportOptions(func(tr *http.Transport) {
			// Bound the connections that many parallel calls open.
			tr.MaxConnsPerHost = 32
			tr.MaxIdleConnsPerHost = 32
			// Node closes idle keep-alive connections after 5 s; drop ours
			// first, or a request can race the server's close and fail
			// with "use of closed network connection".
			tr.IdleConnTimeout = 2 * time.Second
		})
	cfg := emulator.ClientConfig(endpoint)
	cfg.HTTPClient = httpClient
	cfg.RetryMaxAttempts = 3
	return dynamodb.NewFromConfig(cfg, optFns...)
}

// Client returns a client for this server (see NewClient).
func (s *Server) Client(optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return NewClient(s.Endpoint, optFns...)
}

// UniqueTables returns table names with a random suffix, not yet created.
func UniqueTables() dynamostore.Tables {
	p := emulator.UniqueName() + "-"
	return dynamostore.Tables{
		Tasks:      p + "tasks",
		Memory:     p + "memory",
		RateLimits: p + "rate-limits",
		Access:     p + "access",
		APIKeys:    p + "api-keys",
	}
}

// NewTables creates a fresh set of uniquely named tables on the server.
func (s *Server) NewTables(t testing.TB) dynamostore.Tables {
	t.Helper()
	tables := UniqueTables()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dynamostore.CreateTables(ctx, s.Client(), tables); err != nil {
		t.Fatalf("dynamotest: create tables: %v", err)
	}
	return tables
}

// Stores returns stores on a fresh set of tables.
func (s *Server) Stores(t testing.TB) store.Stores {
	t.Helper()
	return dynamostore.New(s.Client(), s.NewTables(t))
}
