// Package repofiles implements the tools that read single files of a
// tenant's repository snapshot (shared/repo):
//
//   - read_repo_file: only the allowed paths of its contract, never the
//     denied ones, at most 100 KB; .claude/memory/<file> shows the
//     committed file followed by the entries appended with
//     write_memory_entry.
//   - read_file: any project file but node_modules/ and what the
//     repository's view refuses (secrets by name or by content, .git/,
//     the server's data directory), whole up to 1 MB or lines startLine to
//     endLine of a file of any size (streamed; at most 1 MB of lines), with
//     language, line count, module, role and modification time, and
//     optionally its level-1 imports that resolve to files of the
//     repository (Go, TypeScript/JavaScript, Python). Each read is counted
//     in the access statistics. With ref, it reads the file as it was at
//     that commit, branch or tag (githistory.Revisions), under the same
//     rules.
//
// Both read through shared/pathpolicy over the repository's view
// (shared/repo), so a path is cleaned, checked against the tool's list and
// the repository's policy, and never followed through a symbolic link or
// out of the repository; read_file's dependencies are read the same way.
package repofiles

import (
	"context"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/pathpolicy"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Tool names, as in contracts/.
const (
	ReadRepoFileTool = "read_repo_file"
	ReadFileTool     = "read_file"
)

// Size limits of the two tools' contracts.
const (
	RepoFileMaxBytes = 100 << 10 // read_repo_file: 100 KB
	FileMaxBytes     = 1 << 20   // read_file: 1 MB
)

// RepoFilePolicy is read_repo_file's allow list. Its "dir/*" entries name
// safe folders: everything below them may be read, at
// any depth. What it denies, the view refuses for every repository tool:
// the repository's deny list (repo.DefaultDeny: .git/ and secrets by
// name), and files whose content holds a secret.
var RepoFilePolicy = pathpolicy.MustNew(pathpolicy.Options{
	Allow: []string{
		"docs/*", "paths/*", "stacks/*",
		".claude/memory/*", ".claude/commands/*", ".claude/skills/*",
		"README.md", "CLAUDE.md",
	},
	MaxBytes: RepoFileMaxBytes,
})

// FilePolicy is read_file's rule: besides the repository's
// deny list, which the view applies (.env files and .git/ among it),
// never node_modules/, anywhere in the path.
var FilePolicy = pathpolicy.MustNew(pathpolicy.Options{
	Deny:      fileDeny,
	MaxBytes:  FileMaxBytes,
	OverLimit: "read_file reads such a file a part at a time: pass startLine and endLine (find_symbols gives a symbol's lines)",
})

// depPolicy is FilePolicy for the dependencies read_file loads: a file
// over DepMaxBytes is left out before it is read.
var depPolicy = pathpolicy.MustNew(pathpolicy.Options{
	Deny:     fileDeny,
	MaxBytes: DepMaxBytes,
})

// fileDeny is what read_file never reads beside the repository's deny list.
var fileDeny = []string{"**/node_modules"}

// Family registers the two tools. Both read snapshots; read_repo_file also
// reads memory entries, and read_file counts accesses.
//
// Memory: they keep a snapshot's zip in memory (compressed: 12 MB for the
// 5,000-file subset of the Go tree, 185 MB for five copies of the Go tree,
// 638 MB of files) and inflate one file per call, so 512 MB holds the zip
// of a repository of up to 1,024 MB of source (about 300 MB) with room for
// a 1 MB file and its dependencies; TOOLSHED_REPO_MAX_MB refuses a larger
// one here (a repository of files that compress poorly may not fit even
// so). They need no second CPU.
var Family = family.ReadsHistory(family.Family{ // read_file's ref
	Name:              "repofiles",
	ReadsRepositories: true,
	Tools:             []string{ReadRepoFileTool, ReadFileTool},
	Grants: []family.Grant{
		family.Objects(repo.Prefix, "s3:GetObject"),
		// Without ListBucket, S3 answers a missing pointer with 403, not
		// 404, and a tenant without a snapshot could not fall back to the
		// default repository.
		family.List(repo.Prefix),
		family.Table(config.MemoryTable, "dynamodb:Query").For(ReadRepoFileTool),
		family.Table(config.AccessTable, "dynamodb:UpdateItem").For(ReadFileTool),
	},
	MemoryMB: 512,
	Env:      map[string]string{"GOMEMLIMIT": "440MiB", config.RepoMaxMB.Name(): "1024"},
	New: func(ctx context.Context, env *wiring.Env) ([]toolkit.Tool, error) {
		src, err := env.Repo(ctx)
		if err != nil {
			return nil, err
		}
		// A deployed function reads the default repository's snapshot
		// before its first call.
		env.WarmDefaultRepo("snapshot", func(ctx context.Context, r reposcope.Ref) error {
			_, err := src.Open(ctx, r)
			return err
		})
		st, err := env.Stores(ctx)
		if err != nil {
			return nil, err
		}
		return Tools(src, env.Revisions(), st.Memory, st.Access, env.Now), nil
	},
}, ReadFileTool)

// service holds what the tools need.
type service struct {
	src       repo.Source
	revisions githistory.Revisions // read_file's ref
	memory    store.Memory
	access    store.Access
	now       func() time.Time
}

// Tools returns read_repo_file and read_file over src; read_file reads
// other commits' files (ref) through revisions. mem supplies the memory
// overlay, access counts reads; now stamps them (nil: time.Now).
func Tools(src repo.Source, revisions githistory.Revisions, mem store.Memory, access store.Access, now func() time.Time) []toolkit.Tool {
	if now == nil {
		now = time.Now
	}
	s := service{src: src, revisions: revisions, memory: mem, access: access, now: now}
	return []toolkit.Tool{
		{Name: ReadRepoFileTool, Handler: toolkit.Typed(s.readRepoFile)},
		{Name: ReadFileTool, Handler: toolkit.Typed(s.readFile)},
	}
}
