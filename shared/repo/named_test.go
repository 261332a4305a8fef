package repo_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestS3NamedRepositories: a tenant's named repositories live beside its
// default one; only the default one falls back to the deployment's, and
// List shows what each tenant reads.
func TestS3NamedRepositories(t *testing.T) {
	s3 := repotest.StartS3(t)
	dir := repotest.WriteDir(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	s3.Publish(t, "shared", "s1", dir)
	s3.PublishRepo(t, reposcope.Ref{Tenant: "shared", Name: "tools"}, "t1", dir)
	s3.Publish(t, "acme", "d1", dir)
	s3.PublishRepo(t, reposcope.Ref{Tenant: "acme", Name: "web"}, "w1", dir)
	s3.PublishRepo(t, reposcope.Ref{Tenant: "acme", Name: "api"}, "a1", dir)
	src := s3.Source(repo.S3Options{DefaultRepo: "shared"})
	ctx := context.Background()

	opens := []struct {
		ref    reposcope.Ref
		commit string // "": ErrNoRepository
		folder string // of the view's Key: the repository read
	}{
		{reposcope.DefaultOf("acme"), "d1", "acme/"},
		{reposcope.Ref{Tenant: "acme", Name: "web"}, "w1", "acme/web/"},
		{reposcope.Ref{Tenant: "acme", Name: "api"}, "a1", "acme/api/"},
		{reposcope.DefaultOf("newcomer"), "s1", "shared/"},                      // the deployment's default repository
		{reposcope.Ref{Tenant: "newcomer", Name: "tools"}, "", ""},              // never another tenant's named one
		{reposcope.Ref{Tenant: "acme", Name: "tools"}, "", ""},                  // nor for a tenant with its own
		{reposcope.Ref{Tenant: "shared", Name: "tools"}, "t1", "shared/tools/"}, // its own tenant reads it
		{reposcope.DefaultOf("web"), "s1", "shared/"},                           // the tenant web reads the deployment's, not acme/web
	}
	for _, o := range opens {
		view, err := src.Open(ctx, o.ref)
		switch {
		case o.commit == "" && !errors.Is(err, repo.ErrNoRepository):
			t.Errorf("Open(%s) = %v, %v; want ErrNoRepository", o.ref, view, err)
		case o.commit != "" && (err != nil || view.Commit() != o.commit):
			t.Errorf("Open(%s) = %v, %v; want commit %s", o.ref, view, err, o.commit)
		case o.commit != "" && !strings.HasPrefix(repo.Key(view), o.folder+"commit-"):
			t.Errorf("Open(%s): key %q, want it in %s", o.ref, repo.Key(view), o.folder)
		}
	}

	lists := map[string][]repo.Listing{
		"acme": {{Name: "api", Commit: "a1", Files: 2, Read: reposcope.Ref{Tenant: "acme", Name: "api"}},
			{Name: "default", Commit: "d1", Files: 2, Read: reposcope.DefaultOf("acme")},
			{Name: "web", Commit: "w1", Files: 2, Read: reposcope.Ref{Tenant: "acme", Name: "web"}}},
		"newcomer": {{Name: "default", Commit: "s1", Files: 2, Read: reposcope.DefaultOf("shared")}},
	}
	for tenant, want := range lists {
		got, err := src.List(ctx, tenant)
		if err != nil || len(got) != len(want) {
			t.Fatalf("List(%s) = %+v, %v", tenant, got, err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("List(%s)[%d] = %+v, want %+v", tenant, i, got[i], want[i])
			}
		}
	}
}
