package mcpserver

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// Completions (completion/complete): the arguments of RepoTemplate (repo:
// the tenant's repositories; path: the repository's files) and of the
// prompts (prompts.go). Paths come from list_files, called through the
// catalog like every tool (so they are the files the request may see, and
// each completion counts against list_files' rate limit): first what
// starts with the typed path in its folder (one depth-1 listing of that
// folder), and when nothing does, a fuzzy match of the typed characters in
// order over the whole repository (one list_files search of at most
// fuzzyLimit files, ranked here). At most maxValues values are sent; total
// and hasMore say how many there were.

// maxValues is the spec's limit of values in one completion.
const maxValues = 100

// folderLimit is the most entries one folder listing reads (list_files'
// maximum page).
const folderLimit = 1000

// fuzzyLimit is the most files one fuzzy search reads (the first, in path
// order).
const fuzzyLimit = 300

// pathKind says what a path argument names.
type pathKind int

const (
	anyPath    pathKind = iota // a file, or a folder to descend into (shown with a trailing '/')
	folderPath                 // a folder
)

// complete answers completion/complete. What was typed never makes it an
// error: a path or repository that is not one completes to nothing.
func (f *features) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	var typed map[string]string // the other arguments, as typed so far
	if p.Context != nil {
		typed = p.Context.Arguments
	}
	var values []string
	var err error
	switch p.Ref.Type {
	case "ref/resource":
		if p.Ref.URI != RepoTemplate || !f.visible(ctx, readFileTool) {
			return nil, invalidParams("no resource template %q: the template is %s", p.Ref.URI, RepoTemplate)
		}
		switch p.Argument.Name {
		case "repo":
			values, err = f.completeRepo(ctx, p.Argument.Value)
		case "path":
			values, err = f.completePath(ctx, typed["repo"], p.Argument.Value, anyPath)
		default:
			return nil, invalidParams("%s has no argument %q (it has repo and path)", RepoTemplate, p.Argument.Name)
		}
	case "ref/prompt":
		pr, ok := f.prompt(ctx, p.Ref.Name)
		if !ok {
			return nil, invalidParams("unknown prompt %q", p.Ref.Name)
		}
		arg, ok := pr.argument(p.Argument.Name)
		if !ok {
			return nil, invalidParams("prompt %s has no argument %q", pr.name, p.Argument.Name)
		}
		values, err = arg.complete(ctx, f, p.Argument.Value, typed)
	}
	if err != nil {
		return nil, f.rpcError(ctx, err, nil)
	}
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}
	if len(values) > maxValues {
		res.Completion.Values = values[:maxValues]
		res.Completion.HasMore = true
	}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	return res, nil
}

// withPrefix returns the values that start with prefix.
func withPrefix(values []string, prefix string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

// completeRepo completes a repository name: DefaultRepo and the names
// list_repos gives (its first page), those that start with value. Only
// DefaultRepo when the request may not call list_repos.
func (f *features) completeRepo(ctx context.Context, value string) ([]string, error) {
	names := []string{DefaultRepo}
	if f.visible(ctx, listReposTool) {
		var out struct {
			Repos []struct{ Name string } `json:"repos"`
		}
		if err := f.call(ctx, listReposTool, map[string]any{"limit": repoLimit}, &out); err != nil {
			return nil, err
		}
		for _, r := range out.Repos {
			if r.Name != DefaultRepo {
				names = append(names, r.Name)
			}
		}
	}
	return withPrefix(names, value), nil
}

// repoLimit is how many repositories a completion lists (list_repos'
// largest page).
const repoLimit = 200

// completePath completes a path of repo ("" or DefaultRepo for the
// caller's default repository): the entries of the typed path's folder
// whose name starts with what follows its last '/', or, when none does
// (or the folder does not exist), a fuzzy match. Nothing when the request
// may not call list_files, or when list_files refuses what was typed.
func (f *features) completePath(ctx context.Context, repo, value string, kind pathKind) ([]string, error) {
	if !f.visible(ctx, listFilesTool) {
		return nil, nil
	}
	dir, base := "", value
	if i := strings.LastIndex(value, "/"); i >= 0 {
		dir, base = value[:i], value[i+1:]
	}
	var out listing
	err := f.call(ctx, listFilesTool, inRepo(repo, map[string]any{"path": dir, "depth": 1, "limit": folderLimit}), &out)
	switch {
	case refusedInput(err):
		// Not a folder: match fuzzily.
	case err != nil:
		return nil, err
	default:
		var values []string
		for _, e := range out.Entries {
			if strings.HasPrefix(path.Base(e.Path), base) {
				if v, ok := completion(e, kind); ok {
					values = append(values, v)
				}
			}
		}
		if len(values) > 0 || value == "" || strings.HasSuffix(value, "/") {
			return values, nil
		}
	}
	values, err := f.fuzzyPaths(ctx, repo, value, kind)
	if refusedInput(err) {
		return nil, nil
	}
	return values, err
}

// refusedInput reports whether err is list_files' refusal of what was
// typed: a folder or repository that is not one, or does not exist.
func refusedInput(err error) bool {
	var fl *failure
	return errors.As(err, &fl) && (fl.out.Error.Code == toolerr.ResourceNotFound || fl.out.Error.Code == toolerr.InvalidInput)
}

// completion is the value an entry completes to, and whether it fits kind.
func completion(e listEntry, kind pathKind) (string, bool) {
	switch {
	case e.Type == "folder" && kind == anyPath:
		return e.Path + "/", true
	case e.Type == "folder":
		return e.Path, true
	}
	return e.Path, kind == anyPath
}

// fuzzyPaths returns the paths whose last segment holds the last typed
// segment's characters in order (and the whole path all typed characters
// but '/'), in any case, best first: names containing the typed segment,
// then shorter paths, then by path. They come from one list_files search
// of at most fuzzyLimit files: those whose name holds the characters in
// order, and those below a folder whose name contains the typed segment
// (a folder counts as a path when a file below it is found).
func (f *features) fuzzyPaths(ctx context.Context, repo, value string, kind pathKind) ([]string, error) {
	base := value[strings.LastIndex(value, "/")+1:]
	patterns := []string{fuzzyGlob(base)}
	if patterns[0] == "" {
		return nil, nil
	}
	if folders := folderGlob(base); folders != "" {
		patterns = append(patterns, folders)
	}
	var out listing
	if err := f.call(ctx, listFilesTool, inRepo(repo, map[string]any{"path": "", "patterns": patterns, "limit": fuzzyLimit}), &out); err != nil {
		return nil, err
	}
	return fuzzyRank(out.Entries, value, base, kind), nil
}

// fuzzyRank returns the files and folders of entries that fuzzyPaths
// completes to, best first.
func fuzzyRank(entries []listEntry, value, base string, kind pathKind) []string {
	seen := map[string]bool{}
	var values []string
	add := func(p, shown string) {
		if !seen[shown] && subsequence(path.Base(p), base) && subsequence(p, value) {
			seen[shown] = true
			values = append(values, shown)
		}
	}
	for _, e := range entries {
		if kind == anyPath {
			add(e.Path, e.Path)
		}
		for d := path.Dir(e.Path); d != "."; d = path.Dir(d) {
			if kind == anyPath {
				add(d, d+"/")
			} else {
				add(d, d)
			}
		}
	}
	lower := strings.ToLower(base)
	contains := func(p string) bool { return strings.Contains(strings.ToLower(path.Base(p)), lower) }
	slices.SortStableFunc(values, func(a, b string) int {
		ca, cb := contains(a), contains(b)
		switch {
		case ca != cb && ca:
			return -1
		case ca != cb:
			return 1
		case len(a) != len(b):
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	return values
}

// globMax is the longest glob list_files takes, in characters (its
// patterns' maxLength in contracts/list_files.json). The globs below keep
// within it by matching only the typed characters that fit; fuzzyRank
// checks them all.
const globMax = 200

// folderGlob is the glob matching the files below a folder whose name
// contains s, in any case ("tkn" → "**/*[tT][kK][nN]*/**"), or "" when s
// holds a character globs give a meaning or is empty. Past globMax it
// matches the folders containing s's start.
func folderGlob(s string) string {
	const around = "**/**/**" // "**/*", then s, then "*/**"
	if s == "" || strings.ContainsAny(s, globSpecial) {
		return ""
	}
	return "**/*" + globOf(s, globMax-len(around), anyCase) + "*/**"
}

// fuzzyGlob is the glob matching names that hold s's characters in order,
// in any case ("tkn" → "*[tT]*[kK]*[nN]*"), without the characters globs
// give a meaning, or "" when none is left. Past globMax it matches names
// holding s's first characters in order.
func fuzzyGlob(s string) string {
	glob := globOf(s, globMax-1, func(r rune) string { return "*" + anyCase(r) })
	if glob == "" {
		return ""
	}
	return glob + "*"
}

// globOf joins piece(r) for each character r of s but globSpecial's, in
// order, as long as the result stays within room characters.
func globOf(s string, room int, piece func(r rune) string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(globSpecial, r) {
			continue
		}
		p := piece(r)
		if room -= utf8.RuneCountInString(p); room < 0 {
			break
		}
		b.WriteString(p)
	}
	return b.String()
}

// anyCase is r, or when it has two cases a class of both ('t' → "[tT]").
func anyCase(r rune) string {
	if lo, up := unicode.ToLower(r), unicode.ToUpper(r); lo != up {
		return "[" + string(lo) + string(up) + "]"
	}
	return string(r)
}

// globSpecial are the characters fuzzy matching leaves out: those globs
// give a meaning, and the folder separator.
const globSpecial = `*?[]{}\/!`

// subsequence reports whether the characters of want, but globSpecial's,
// occur in s in order, in any case.
func subsequence(s, want string) bool {
	s = strings.ToLower(s)
	for _, r := range strings.ToLower(want) {
		if strings.ContainsRune(globSpecial, r) {
			continue
		}
		i := strings.IndexRune(s, r)
		if i < 0 {
			return false
		}
		s = s[i+len(string(r)):]
	}
	return true
}
