// Package contextsearch implements context_search: hybrid
// lexical and embedding search over a tenant's discoveries (memory
// entries), session notes and code.
//
// Every call reads the tenant's new memory entries from the store (so a
// discovery written a moment ago is found lexically at once), joins them
// with the current code index and the vectors built in the background,
// and ranks them with contextindex. Deployed, the indexer Lambda builds
// the indexes in S3 (indexes/<repo>/…, see indexfile.Store) and this
// package only reads them, revalidating by ETag (stored.go); locally, the
// same indexes are built in process under the data directory (live.go).
// The wiring chooses which (wiring.CodeIndexMode); the memory entries are
// read the same way in both (service.go).
package contextsearch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Tool is the tool's name, as in contracts/.
const Tool = "context_search"

// IndexDir is where indexes live under the local data directory.
const IndexDir = "index"

// Family registers context_search. Deployed it reads the Memory table,
// the indexes in the bucket, and embeds queries with Titan V2.
var Family = family.Family{
	Name:              "contextsearch",
	ReadsRepositories: true,
	Tools:             []string{Tool},
	Grants: []family.Grant{
		family.Table(config.MemoryTable, "dynamodb:Query"),
		family.Objects(indexfile.BucketPrefix, "s3:GetObject"),
		family.List(indexfile.BucketPrefix), // a missing index is then 404, not 403
		family.Model(embedding.TitanV2),
	},
	MemoryMB: 2048,
	// Each search may embed its query (Bedrock's quota is per account).
	Concurrency: 10,
	Settings:    family.Every(append([]settings.Setting{SaveAfter}, embedding.Settings...)...),
	New: func(ctx context.Context, env *wiring.Env) ([]toolkit.Tool, error) {
		s, err := FromEnv(ctx, env)
		if err != nil {
			return nil, err
		}
		return Tools(s), nil
	},
}

// SaveAfter is how long the local server's code index waits after a
// change before it saves what changed.
var SaveAfter = settings.New("TOOLSHED_INDEX_SAVE_AFTER", "30s",
	"how long the local server's code index waits after a change before it saves what changed (changes meanwhile are saved together; it is also saved at shutdown)",
	settings.Duration)

// Tools returns context_search served by s.
func Tools(s *Service) []toolkit.Tool {
	return []toolkit.Tool{{Name: Tool, Handler: toolkit.Typed(s.search)}}
}

// FromEnv builds the service on the indexes the wiring chose
// (env.CodeIndexes): stored, it reads the indexes the indexer Lambda keeps
// in S3 (a tenant without a code index of its own searches the default
// repository's); live, it builds them in process, under <data>/index (in
// memory when there is no data directory), with the code of the
// repository the other repository tools read (env.Repo).
func FromEnv(ctx context.Context, env *wiring.Env) (*Service, error) {
	st, err := env.Stores(ctx)
	if err != nil {
		return nil, err
	}
	emb, err := embedding.FromEnv(ctx, env.Getenv, env.AWS)
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	idx, err := env.CodeIndexes(ctx, IndexDir)
	if err != nil {
		return nil, err
	}
	opts := Options{Mode: idx.Mode, Memory: st.Memory, Embedder: emb, Blobs: idx.Blobs, Log: env.Log, Now: env.Now}
	if idx.Mode == wiring.CodeIndexStored {
		opts.Revalidate = DefaultRevalidate
		opts.DefaultRepo = idx.DefaultRepo
		s := New(opts)
		// A deployed function reads the default repository's code index
		// before its first call.
		env.WarmDefaultRepo("code index", func(ctx context.Context, r reposcope.Ref) error {
			select {
			case <-s.Preload(ctx, r.Key()):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		return s, nil
	}
	src, err := env.Repo(ctx)
	if err != nil {
		return nil, err
	}
	opts.Repo = src
	// The process's symbol tables (the navigation tools' too), taken
	// before OnClose below: the code indexes close first, then the
	// tables they take their parses from.
	if opts.Symbols, err = env.SymbolTables(ctx); err != nil {
		return nil, err
	}
	if opts.SaveAfter, err = SaveAfter.Get(env.Getenv); err != nil {
		return nil, err
	}
	s := New(opts)
	env.OnClose(func() error { s.Close(); return nil })
	env.ReportStatus("codeIndexes", func(repos []string) any { return s.Indexes(repos) })
	live := s.code.(*liveIndexes) // New built live indexes: opts.Mode is CodeIndexLive
	env.KeepRepoIndexes(live.repoIndex)
	// The local repository is every tenant's: index it from the start.
	if err := s.Start(ctx, idx.Tenant); err != nil {
		return nil, err
	}
	return s, nil
}

// DefaultRevalidate is how often a warm function asks S3 whether the
// indexes changed (a conditional GET per object).
const DefaultRevalidate = 5 * time.Second

// Options configure New.
type Options struct {
	// Mode is who keeps the indexes: wiring.CodeIndexLive builds them in
	// process (in the background); wiring.CodeIndexStored (or "") reads
	// the ones the indexer Lambda keeps.
	Mode     wiring.CodeIndexMode
	Memory   MemoryLister
	Embedder contextindex.Embedder // nil: lexical only
	Blobs    indexfile.Blobs       // where indexes live
	// Repo yields the repositories whose code is indexed in process, one
	// live index per repository view shared by every tenant that reads it
	// (CodeIndexLive; nil for no code corpus).
	Repo repo.Source
	// Symbols are the symbol tables of Repo's views, whose parse of each
	// file a live index cuts the file at, so that a file is parsed once in
	// the process (CodeIndexLive; nil: each index parses its files).
	Symbols *symbols.Tables
	// DefaultRepo is whose code index a tenant without one searches (the
	// deployment's default repository, CodeIndexStored); "" for none.
	DefaultRepo string
	// SaveAfter is how long a local code index waits after a change
	// before it is saved (CodeIndexLive; 0: 30 s).
	SaveAfter time.Duration
	// Revalidate is how long stored indexes are trusted before asking the
	// store again; 0 asks on every call (CodeIndexStored). Live, the
	// process is their only writer: they are trusted until it saves new
	// ones.
	Revalidate time.Duration
	Log        *slog.Logger
	Now        func() time.Time
}
