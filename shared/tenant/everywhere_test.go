package tenant_test

// A tenant accepted anywhere is accepted everywhere: each place that takes
// a tenant is run over tenanttest.Cases and must accept exactly what
// tenant.Valid accepts. (The CLIs, package main, run the same table in
// their own tests.)

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/oauth"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/testenv/issuertest"
	"github.com/toolshed/toolshed/shared/testenv/tenanttest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/hello"
	"github.com/toolshed/toolshed/shared/workspace"
)

// accepted reports whether a call got past its tenant check: whatever
// else failed, it did not refuse the tenant (or the repository key made
// of it: a tenant with a '/' makes a key whose name is refused).
func accepted(err error) bool {
	return !errors.Is(err, tenant.ErrInvalid) && !errors.Is(err, reposcope.ErrInvalid)
}

func TestPipelineAgrees(t *testing.T) {
	h := tooltest.New(t, tooltest.BoltStores(t), []toolkit.Tool{hello.New()})
	tenanttest.Agree(t, "pipeline", func(t *testing.T, s string) bool {
		return h.Call(s, "hello", `{"name":"x"}`).OK
	})
}

func TestAPIKeysAgree(t *testing.T) {
	keys := tooltest.BoltStores(t).APIKeys
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tenanttest.Agree(t, "auth.Create", func(t *testing.T, s string) bool {
		_, _, err := auth.Create(t.Context(), keys, s, "laptop", now)
		return err == nil
	})
	// A key stored with any tenant (stores do not check) resolves only
	// when its tenant is valid.
	tenanttest.Agree(t, "auth.Resolve", func(t *testing.T, s string) bool {
		key := auth.NewKey()
		if err := keys.Create(t.Context(), store.APIKey{Hash: store.HashKey(key), Tenant: s, Name: "stored", CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		_, err := auth.Resolve(t.Context(), keys, key)
		return err == nil
	})
}

func TestConfigAgrees(t *testing.T) {
	settings := map[string]func(config.Config) string{
		"TOOLSHED_LOCAL_TENANT": func(c config.Config) string { return c.LocalTenant },
		"TOOLSHED_DEFAULT_REPO": func(c config.Config) string { return c.DefaultRepo },
	}
	for name, setting := range settings {
		tenanttest.Agree(t, name, func(t *testing.T, s string) bool {
			c, err := config.FromEnv(func(k string) string {
				if k == name {
					return s
				}
				return ""
			})
			// Accepted means taken as given: a blank setting is the
			// default ("local", or no default repository), not a tenant.
			return err == nil && setting(c) != "" && setting(c) == s
		})
	}
}

func TestWorkspaceAgrees(t *testing.T) {
	ws := workspace.NewDir(t.TempDir(), workspace.Quota{Bytes: 1 << 20, Files: 10})
	tenanttest.Agree(t, "workspace", func(t *testing.T, s string) bool {
		_, err := ws.Read(t.Context(), s, "notes.txt")
		return accepted(err)
	})
}

// refusingS3 answers every request with errRefused: a repository call
// that reaches it has accepted the tenant.
type refusingS3 struct{ objects.API }

var errRefused = errors.New("refused by the test")

func (refusingS3) GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	return nil, errRefused
}

func (refusingS3) PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	return nil, errRefused
}

func (refusingS3) HeadObject(context.Context, *s3.HeadObjectInput, ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	return nil, errRefused
}

func TestSnapshotsAgree(t *testing.T) {
	bucket := objects.New(refusingS3{}, "snapshots")
	dir := t.TempDir()
	tenanttest.Agree(t, "repo.Publish", func(t *testing.T, s string) bool {
		_, err := repo.Publish(t.Context(), bucket, repo.PublishInput{Repo: reposcope.DefaultOf(s), Commit: "c1", Dir: dir, MaxBytes: 1 << 20, Now: time.Now()})
		return accepted(err)
	})
	tenanttest.Agree(t, "repo.List", func(t *testing.T, s string) bool {
		_, err := repo.List(t.Context(), bucket, reposcope.DefaultOf(s))
		return accepted(err)
	})
	tenanttest.Agree(t, "repo.Rollback", func(t *testing.T, s string) bool {
		_, err := repo.Rollback(t.Context(), bucket, reposcope.DefaultOf(s), "c1", time.Now())
		return accepted(err)
	})
}

func TestIndexesAgree(t *testing.T) {
	st := indexfile.NewStore(&indexfile.MemBlobs{})
	// Code indexes are a repository's: the tenant's named repository "r".
	tenanttest.Agree(t, "contextindex pointer", func(t *testing.T, s string) bool {
		_, _, err := st.Pointer(t.Context(), reposcope.Ref{Tenant: s, Name: "r"}.Key(), "")
		return accepted(err)
	})
	tenanttest.Agree(t, "contextindex code", func(t *testing.T, s string) bool {
		_, err := st.LoadCode(t.Context(), reposcope.Ref{Tenant: s, Name: "r"}.Key(), indexfile.Pointer{Commit: "c1", Format: indexfile.CodeFormat})
		return accepted(err)
	})
	tenanttest.Agree(t, "contextindex memory vectors", func(t *testing.T, s string) bool {
		_, _, err := st.MemoryVectors(t.Context(), s, "model", "")
		return accepted(err)
	})
}

// openRecorder records which repositories the indexer opens.
type openRecorder struct{ opened map[string]bool }

func (o openRecorder) Current(_ context.Context, name string) (indexer.Snapshot, error) {
	o.opened[name] = true
	return indexer.Snapshot{}, errRefused
}

func (o openRecorder) Files(context.Context, string, string, []string) ([]contextindex.File, error) {
	return nil, errRefused
}

func (o openRecorder) View(context.Context, string, string) (repo.View, error) {
	return nil, errRefused
}

// TestIndexerAgrees: the indexer indexes snapshots/<tenant>/r/current.json
// (the tenant's repository r) only for a valid tenant, and ignores other
// keys.
func TestIndexerAgrees(t *testing.T) {
	rec := openRecorder{opened: map[string]bool{}}
	ix := &indexer.Indexer{
		Store:     indexfile.NewStore(&indexfile.MemBlobs{}),
		Snapshots: rec,
		Now:       time.Now,
		Log:       slog.New(slog.DiscardHandler),
	}
	tenanttest.Agree(t, "indexer", func(t *testing.T, s string) bool {
		r := reposcope.Ref{Tenant: s, Name: "r"}
		key := url.QueryEscape(repo.PointerKey(r))
		raw, _ := json.Marshal(map[string]any{"Records": []any{map[string]any{
			"eventSource": "aws:s3", "eventName": "ObjectCreated:Put", "s3": map[string]any{"object": map[string]any{"key": key}},
		}}})
		_, err := ix.Handle(t.Context(), raw)
		if rec.opened[r.Key()] != (err != nil) {
			t.Errorf("indexer: %q opened %v, error %v", s, rec.opened[r.Key()], err)
		}
		return rec.opened[r.Key()]
	})
}

func TestOAuthTokensAgree(t *testing.T) {
	iss := issuertest.Start(t)
	rs, err := oauth.New(oauth.Config{PublicURL: "https://tools.example", Keys: auth.Keys{Store: tooltest.BoltStores(t).APIKeys},
		OAuth: config.OAuth{Issuer: iss.URL, TenantClaim: "sub", ReadScope: "r", FullScope: "f"}})
	if err != nil {
		t.Fatal(err)
	}
	tenanttest.Agree(t, "an access token's tenant claim", func(t *testing.T, s string) bool {
		req := httptest.NewRequest("POST", "/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+iss.Token(t, iss.Claims("https://tools.example/mcp", s, "f")))
		g, err := rs.Authenticate(req)
		return err == nil && g.Tenant == s
	})
}
