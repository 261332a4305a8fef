// Command apikeys creates, lists and revokes Toolshed API keys. Keys are
// stored only as SHA-256 hashes; a new key is printed once and cannot be
// shown again. It uses the same storage settings as the server
// (TOOLSHED_STORE, TOOLSHED_DATA_DIR, TOOLSHED_APIKEYS_TABLE, ...).
//
//	go run ./scripts/apikeys create -tenant acme -name laptop
//	go run ./scripts/apikeys list
//	go run ./scripts/apikeys revoke <id>
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
	"github.com/toolshed/toolshed/shared/backend"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/store"
)

const usage = `usage:
  apikeys create -tenant TENANT -name NAME   create a key (printed once)
  apikeys list                               list keys (id = hash prefix)
  apikeys revoke ID                          revoke the key whose id (hash prefix) is ID`

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "apikeys:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	stores, closeStores, err := backend.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStores()
	return command(ctx, stores.APIKeys, args, out, time.Now)
}

func command(ctx context.Context, keys store.APIKeys, args []string, out io.Writer, now func() time.Time) error {
	switch args[0] {
	case "create":
		fs := flag.NewFlagSet("create", flag.ContinueOnError)
		tenant := fs.String("tenant", "", "tenant the key belongs to")
		name := fs.String("name", "", "a name to recognise the key by")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		key, rec, err := auth.Create(ctx, keys, *tenant, *name, now())
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "created key %s for tenant %s (%s)\n\n  %s\n\nStore it now: it is not kept and cannot be shown again.\n",
			id(rec), rec.Tenant, rec.Name, key)
		return nil
	case "list":
		all, err := keys.List(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tTENANT\tNAME\tCREATED\tREVOKED")
		for _, k := range all {
			revoked := "-"
			if k.Revoked && k.RevokedAt != nil {
				revoked = k.RevokedAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", id(k), k.Tenant, k.Name, k.CreatedAt.UTC().Format(time.RFC3339), revoked)
		}
		return w.Flush()
	case "revoke":
		if len(args) != 2 {
			return errors.New(usage)
		}
		k, err := find(ctx, keys, args[1])
		if err != nil {
			return err
		}
		if _, err := keys.Revoke(ctx, k.Hash, now()); err != nil {
			return err
		}
		fmt.Fprintf(out, "revoked key %s (%s, tenant %s)\n", id(k), k.Name, k.Tenant)
		return nil
	default:
		return errors.New(usage)
	}
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
