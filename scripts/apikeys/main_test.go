package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/store/boltstore"
)

func TestCreateListRevoke(t *testing.T) {
	db, err := boltstore.Open(filepath.Join(t.TempDir(), "k.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	keys := db.Stores().APIKeys
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) }

	var out bytes.Buffer
	if err := command(ctx, keys, []string{"create", "-tenant", "acme", "-name", "laptop"}, &out, now); err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile(`tsk_[A-Za-z0-9_-]{43}`).FindString(out.String())
	if key == "" {
		t.Fatalf("no key printed: %s", out.String())
	}
	if tenant, err := auth.Resolve(ctx, keys, key); err != nil || tenant != "acme" {
		t.Fatalf("new key resolves to %q, %v", tenant, err)
	}
	all, _ := keys.List(ctx)
	if len(all) != 1 || strings.Contains(all[0].Hash, key) || all[0].Hash == key {
		t.Fatalf("stored %+v", all)
	}

	out.Reset()
	if err := command(ctx, keys, []string{"list"}, &out, now); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "acme") || strings.Contains(out.String(), key) {
		t.Errorf("list output %q", out.String())
	}

	out.Reset()
	if err := command(ctx, keys, []string{"revoke", all[0].Hash[:8]}, &out, now); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Resolve(ctx, keys, key); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("revoked key still resolves: %v", err)
	}

	for _, bad := range [][]string{{"create", "-tenant", "a#b", "-name", "x"}, {"create", "-tenant", "acme"}, {"revoke", "abc"}, {"revoke", "ffffffff"}, {"frobnicate"}} {
		if err := command(ctx, keys, bad, &out, now); err == nil {
			t.Errorf("%v succeeded", bad)
		}
	}
}
