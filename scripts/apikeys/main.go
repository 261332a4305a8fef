// Command apikeys creates, lists, revokes and deletes Toolshed API keys. Keys are
// stored only as SHA-256 hashes; a new key is printed once and cannot be
// shown again. It uses the same storage settings as the server
// (TOOLSHED_STORE, TOOLSHED_DATA_DIR, TOOLSHED_APIKEYS_TABLE, ...), or,
// with -stack NAME, the API keys table of that deployed stack (read from
// its outputs with the usual AWS credentials and region).
//
//	go run ./scripts/apikeys create -tenant acme -name laptop
//	go run ./scripts/apikeys create -tenant acme -name ci -repos api,web
//	go run ./scripts/apikeys list
//	go run ./scripts/apikeys revoke <id>
//	go run ./scripts/apikeys delete <id>
//	go run ./scripts/apikeys -stack Toolshed create -tenant acme -name laptop
//
// The embedded store is locked while the local server runs: stop it first.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/stackoutputs"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/wiring"
	"github.com/toolshed/toolshed/shared/wiring/embedded"
)

const usage = `usage:
  apikeys [-stack NAME] create -tenant TENANT -name NAME [-repos A,B]
                                                           create a key (printed once), limited
                                                           to repositories A and B when given
  apikeys [-stack NAME] list                               list keys (id = hash prefix)
  apikeys [-stack NAME] revoke ID                          revoke the key whose id (hash prefix) is ID
  apikeys [-stack NAME] delete ID                          delete the key whose id is ID

-stack NAME uses the API keys table of that deployed stack (from its
outputs; needs AWS credentials and its region); without it, the store the
local server uses (TOOLSHED_STORE, TOOLSHED_DATA_DIR, TOOLSHED_APIKEYS_TABLE).

Keys give access to one tenant's data (with -repos, to those of its
repositories only: any other answers as if it did not exist). The local server requires keys while
any unrevoked key exists; with none (or TOOLSHED_AUTH=off) it serves tenant
"local" on loopback without keys.`

func main() {
	ctx := context.Background()
	load := func(stack string) (config.Config, error) { return stackoutputs.Config(ctx, stack, os.Getenv) }
	os.Exit(run(ctx, os.Args[1:], load, os.Stdout, os.Stderr))
}

// run is main with its inputs passed in; it returns the exit status. load
// reads the configuration, pointed at the deployed stack it names ("":
// none).
func run(ctx context.Context, args []string, load func(stack string) (config.Config, error), out, errOut io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintln(out, usage)
		return 0
	}
	global := flag.NewFlagSet("apikeys", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	stack := global.String("stack", "", "the deployed stack whose API keys table to use")
	if err := global.Parse(args); err != nil || global.NArg() == 0 {
		fmt.Fprintln(errOut, usage)
		return 2
	}
	if err := open(ctx, global.Args(), func() (config.Config, error) { return load(*stack) }, out); err != nil {
		fmt.Fprintln(errOut, "apikeys:", err)
		return 1
	}
	return 0
}

// open opens the configured store and runs the command on it.
func open(ctx context.Context, args []string, load func() (config.Config, error), out io.Writer) error {
	cfg, err := load()
	if err != nil {
		return err
	}
	env := wiring.NewEnv(cfg, nil)
	defer env.Close()
	err = embedded.Use(env)
	if errors.Is(err, boltstore.ErrLocked) {
		return fmt.Errorf("the embedded store in %s is in use, most likely by a running local server: stop the server first (Ctrl-C where `make run` runs), then try again", cfg.DataDir)
	}
	if err != nil {
		return err
	}
	stores, err := env.Stores(ctx)
	if err != nil {
		return err
	}
	return command(ctx, stores.APIKeys, args, out, time.Now)
}

// command runs one command (args[0], with its arguments) on keys.
func command(ctx context.Context, keys store.APIKeys, args []string, out io.Writer, now func() time.Time) error {
	switch args[0] {
	case "create":
		return createKey(ctx, keys, args[1:], out, now)
	case "list":
		return listKeys(ctx, keys, out)
	case "revoke", "delete":
		if len(args) != 2 {
			return errors.New(usage)
		}
		k, err := find(ctx, keys, args[1])
		if err != nil {
			return err
		}
		if args[0] == "revoke" {
			return revokeKey(ctx, keys, k, out, now)
		}
		return deleteKey(ctx, keys, k, out)
	default:
		return errors.New(usage)
	}
}

// createKey creates a key with the flags in args and prints it.
func createKey(ctx context.Context, keys store.APIKeys, args []string, out io.Writer, now func() time.Time) error {
	fs := flag.NewFlagSet("create", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "tenant the key belongs to")
	name := fs.String("name", "", "a name to recognise the key by")
	repos := fs.String("repos", "", "the repositories the key may read, comma-separated (default: every repository of the tenant)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	limit, err := reposcope.ParseList(*repos)
	if err != nil {
		return fmt.Errorf("-repos: %w", err)
	}
	key, rec, err := auth.Create(ctx, keys, *tenant, *name, now(), limit...)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "created key %s for tenant %s (%s), repositories: %s\n\n  %s\n\nStore it now: it is not kept and cannot be shown again.\n",
		id(rec), rec.Tenant, rec.Name, reposOf(rec), key)
	return nil
}

// listKeys prints a table of the keys.
func listKeys(ctx context.Context, keys store.APIKeys, out io.Writer) error {
	all, err := keys.List(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTENANT\tNAME\tREPOS\tCREATED\tREVOKED")
	for _, k := range all {
		revoked := "-"
		if k.Revoked && k.RevokedAt != nil {
			revoked = k.RevokedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", id(k), k.Tenant, k.Name, reposOf(k), k.CreatedAt.UTC().Format(time.RFC3339), revoked)
	}
	return w.Flush()
}

// revokeKey revokes k unless it already is.
func revokeKey(ctx context.Context, keys store.APIKeys, k store.APIKey, out io.Writer, now func() time.Time) error {
	if k.Revoked && k.RevokedAt != nil {
		fmt.Fprintf(out, "key %s (%s, tenant %s) was already revoked at %s; nothing changed\n",
			id(k), k.Name, k.Tenant, k.RevokedAt.UTC().Format(time.RFC3339))
		return nil
	}
	if _, err := keys.Revoke(ctx, k.Hash, now()); err != nil {
		return err
	}
	fmt.Fprintf(out, "revoked key %s (%s, tenant %s)\n", id(k), k.Name, k.Tenant)
	return nil
}

// deleteKey deletes k (its tenant's data stays).
func deleteKey(ctx context.Context, keys store.APIKeys, k store.APIKey, out io.Writer) error {
	if _, err := keys.Delete(ctx, k.Hash); err != nil {
		return err
	}
	fmt.Fprintf(out, "deleted key %s (%s, tenant %s); the tenant's data is kept\n", id(k), k.Name, k.Tenant)
	return nil
}

// reposOf says which repositories k may read.
func reposOf(k store.APIKey) string {
	if k.Repos == nil {
		return "all"
	}
	return strings.Join(k.Repos, ",")
}

// id is the short public id of a key: the first 12 hex digits of its hash.
func id(k store.APIKey) string { return k.Hash[:12] }

func find(ctx context.Context, keys store.APIKeys, prefix string) (store.APIKey, error) {
	if len(prefix) < 6 {
		return store.APIKey{}, errors.New("give at least 6 characters of the key id")
	}
	all, err := keys.List(ctx)
	if err != nil {
		return store.APIKey{}, err
	}
	var found []store.APIKey
	for _, k := range all {
		if strings.HasPrefix(k.Hash, strings.ToLower(prefix)) {
			found = append(found, k)
		}
	}
	switch len(found) {
	case 0:
		return store.APIKey{}, fmt.Errorf("no key with id %s", prefix)
	case 1:
		return found[0], nil
	default:
		return store.APIKey{}, fmt.Errorf("id %s matches %d keys; give more characters", prefix, len(found))
	}
}
