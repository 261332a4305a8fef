package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/memoryfile"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// Resources. A tenant's repository files are the resource template
// RepoTemplate, repo://{repo}/{+path} (the URI form of the spec's own
// template examples, with the reserved expansion that keeps the slashes of
// a path): repo is what read_file's repo argument takes, one of the names
// list_repos gives or DefaultRepo for the caller's default repository
// (whatever its name: the local server names its repositories after their
// folders). resources/read of one calls read_file with that repo, so it
// reads what
// read_file reads (the repository view, its access policy, its 1 MB limit)
// and a refusal is read_file's (PATH_NOT_ALLOWED for a denied file,
// RESOURCE_NOT_FOUND for a missing one, INVALID_INPUT for a folder or a
// binary file). The memory files are the resources memory://<file>,
// rendered as memoryfile.Render renders them (the entries, oldest first,
// one per line or one markdown block each), paged through read_memory.
//
// resources/list is bounded: the memory files and the repository's
// top-level files, listed by list_files a page at a time (nextCursor is
// list_files' own cursor); every other file is reached through the
// template, whose path argument completes (completion.go).

// RepoTemplate is the URI template of repository files.
const RepoTemplate = "repo://{repo}/{+path}"

// DefaultRepo names the caller's default repository, in resource URIs as
// in the tools' repo argument.
const DefaultRepo = reposcope.Default

// Resource URI schemes.
const (
	repoScheme   = "repo"
	memoryScheme = "memory"
)

// listPage is how many entries of the repository's top level one
// resources/list page asks list_files for.
const listPage = 200

// memoryMaxBytes bounds a memory file read as one resource: read_file's
// limit. A larger file is paged through with read_memory.
const memoryMaxBytes = 1 << 20

// memoryLimit is the page size resources/read asks read_memory for (its
// contract's maximum).
const memoryLimit = 100

// live is the cache hint of what reads the repository or memory: both
// change at any moment (a working tree is followed as it is edited, memory
// is appended to), and both are the tenant's own.
var live = mcp.Cacheable{TTLMs: 0, CacheScope: "private"}

// listTTLMs is how long the lists that change only with a new server
// version (tools, prompts, resource templates) may be cached. They are
// private: what a list shows depends on the credential and the client's
// tool selection.
const listTTLMs = 5 * 60 * 1000

// cacheHint is the ttlMs and cacheScope of a result of method.
func cacheHint(method string) mcp.Cacheable {
	switch method {
	case "tools/list", "prompts/list", "resources/templates/list":
		return mcp.Cacheable{TTLMs: listTTLMs, CacheScope: "private"}
	case "resources/list", "resources/read":
		return live
	}
	return mcp.Cacheable{CacheScope: "public"} // server/discover: the same for every caller
}

// repoURI is the resource URI of a file of repo ("" for the caller's
// default repository).
func repoURI(repo, p string) string {
	return (&url.URL{Scheme: repoScheme, Host: cmp.Or(repo, DefaultRepo), Path: "/" + p}).String()
}

// parseRepoURI returns the repository and the path of a repository file's
// resource URI, or false when uri is not one (no valid repository name, a
// query or a fragment).
func parseRepoURI(uri string) (repo, p string, ok bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != repoScheme || reposcope.Check(u.Host) != nil || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", "", false
	}
	p, ok = strings.CutPrefix(u.Path, "/")
	return u.Host, p, ok && p != ""
}

// inRepo returns a repository tool's arguments with repo added ("" for the
// caller's default repository: no argument).
func inRepo(repo string, args map[string]any) map[string]any {
	if repo != "" {
		args["repo"] = repo
	}
	return args
}

// memoryURI is the resource URI of a memory file.
func memoryURI(file string) string { return memoryScheme + "://" + file }

// resourceTools returns the tool a resources/read of uri calls.
func resourceTools(uri string) []string {
	switch {
	case strings.HasPrefix(uri, repoScheme+"://"):
		return []string{readFileTool}
	case strings.HasPrefix(uri, memoryScheme+"://"):
		return []string{readMemoryTool}
	}
	return nil
}

// memoryTitles are the memory files' display names.
var memoryTitles = map[string]string{
	memoryfile.ProgressLog:   "Progress log (memory)",
	memoryfile.Decisions:     "Decisions (memory)",
	memoryfile.BestPractices: "Best practices (memory)",
}

// addResources registers the repository template and the memory files.
func (f *features) addResources(srv *mcp.Server) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: RepoTemplate,
		Name:        "repository-file",
		Title:       "Repository file",
		Description: "A file of the repository, read as read_file reads it (UTF-8 text up to 1 MB; never secrets, keys, .git/ or node_modules/). " +
			"repo is a name list_repos gives, or " + DefaultRepo + " for your default repository; path is relative to the repository root (net/http/server.go) and completes.",
		Icons: icons,
	}, f.readRepoFile)
	for _, file := range memoryfile.Names() {
		srv.AddResource(memoryResource(file), f.readMemory)
	}
}

func memoryResource(file string) *mcp.Resource {
	return &mcp.Resource{
		URI:         memoryURI(file),
		Name:        file,
		Title:       memoryTitles[file],
		Description: "The entries appended to " + file + " with write_memory_entry, oldest first",
		MIMEType:    language.MIMEType(language.Of(file)),
	}
}

// readRepoFile answers resources/read of a repository file with read_file.
func (f *features) readRepoFile(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	repo, p, ok := parseRepoURI(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	var out struct {
		File struct {
			Content  string `json:"content"`
			Language string `json:"language"`
		} `json:"file"`
	}
	if err := f.call(ctx, readFileTool, inRepo(repo, map[string]any{"path": p}), &out); err != nil {
		return nil, f.rpcError(ctx, err, map[string]any{"uri": uri})
	}
	return textResource(uri, language.MIMEType(out.File.Language), out.File.Content), nil
}

// readMemory answers resources/read of a memory file, paging through it
// with read_memory.
func (f *features) readMemory(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	file, ok := strings.CutPrefix(uri, memoryScheme+"://")
	if _, known := memoryfile.FormatOf(file); !ok || !known {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	text, err := memoryfile.Render(ctx, memoryPages{f}, "", file, memoryMaxBytes)
	if err == nil && len(text) > memoryMaxBytes {
		err = refuse(ctx, readMemoryTool, toolerr.New(toolerr.SizeLimitExceeded,
			"%s holds more than %d bytes, too much for one resource; page through it with read_memory", file, memoryMaxBytes))
	}
	if err != nil {
		return nil, f.rpcError(ctx, err, map[string]any{"uri": uri})
	}
	return textResource(uri, language.MIMEType(language.Of(file)), text), nil
}

// textResource is the result of reading a text resource. An empty text is
// sent as an empty blob: the SDK leaves an empty text out, and contents
// need one of the two.
func textResource(uri, mimeType, text string) *mcp.ReadResourceResult {
	c := &mcp.ResourceContents{URI: uri, MIMEType: mimeType, Text: text}
	if text == "" {
		c.Blob = []byte{}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}
}

// memoryPages pages through a memory file with read_memory for the request
// in ctx (whose tenant it is: the tenant argument is not used). The
// position it returns and takes back is read_memory's opaque cursor.
type memoryPages struct{ f *features }

var _ memoryfile.Lister = memoryPages{}

// List returns one page of the file's entries.
func (m memoryPages) List(ctx context.Context, _, file string, q store.MemoryQuery) (store.MemoryPage, error) {
	args := map[string]any{"file": file, "limit": memoryLimit}
	if q.After != "" {
		args["cursor"] = q.After
	}
	var out struct {
		Entries []struct {
			ID      string `json:"id"`
			Content string `json:"content"`
		} `json:"entries"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := m.f.call(ctx, readMemoryTool, args, &out); err != nil {
		return store.MemoryPage{}, err
	}
	page := store.MemoryPage{}
	for _, e := range out.Entries {
		page.Entries = append(page.Entries, store.MemoryEntry{File: file, ID: e.ID, Content: e.Content})
	}
	if out.NextCursor != nil {
		page.Next = *out.NextCursor
	}
	return page, nil
}

// listEntry is an entry of list_files' answer.
type listEntry struct {
	Path     string `json:"path"`
	Type     string `json:"type"`
	Size     int64  `json:"size"`
	Language string `json:"language"`
	Lines    int    `json:"lines"`
}

// listing is list_files' answer.
type listing struct {
	Entries    []listEntry `json:"entries"`
	Total      int         `json:"total"`
	NextCursor *string     `json:"next_cursor"`
}

// listResources answers resources/list: on the first page the memory
// files (when the request may call read_memory), then the repository's
// top-level files a list_files page at a time (when it may call list_files
// and read_file).
func (f *features) listResources(ctx context.Context, cursor string) (*mcp.ListResourcesResult, error) {
	res := &mcp.ListResourcesResult{Cacheable: cacheHint("resources/list"), Resources: []*mcp.Resource{}}
	if cursor == "" && f.visible(ctx, readMemoryTool) {
		for _, file := range memoryfile.Names() {
			res.Resources = append(res.Resources, memoryResource(file))
		}
	}
	if !f.visible(ctx, listFilesTool, readFileTool) {
		if cursor != "" {
			return nil, invalidParams("cursor: this listing has no further pages")
		}
		return res, nil
	}
	args := map[string]any{"path": "", "depth": 1, "limit": listPage}
	if cursor != "" {
		args["cursor"] = cursor
	}
	var out listing
	if err := f.call(ctx, listFilesTool, args, &out); err != nil {
		return nil, f.rpcError(ctx, err, nil)
	}
	for _, e := range out.Entries {
		if e.Type != "file" {
			continue
		}
		res.Resources = append(res.Resources, &mcp.Resource{
			URI:         repoURI("", e.Path),
			Name:        e.Path,
			Title:       path.Base(e.Path),
			Description: fmt.Sprintf("Repository file: %s, %d lines", e.Language, e.Lines),
			MIMEType:    language.MIMEType(e.Language),
			Size:        e.Size,
		})
	}
	if out.NextCursor != nil {
		res.NextCursor = *out.NextCursor
	}
	return res, nil
}
