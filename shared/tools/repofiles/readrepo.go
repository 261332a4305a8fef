package repofiles

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/pathpolicy"
	"github.com/toolshed/toolshed/shared/repo"

	"github.com/toolshed/toolshed/shared/memoryfile"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// memoryDir holds the memory files in a repository.
const memoryDir = ".claude/memory/"

type readRepoInput struct {
	Path string `json:"path"`
	Repo string `json:"repo"` // "": the default repository
}

type readRepoOutput struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Exists  bool   `json:"exists"`
	Size    int    `json:"size"`
}

// readRepoFile serves read_repo_file.
func (s service) readRepoFile(ctx context.Context, call toolkit.Call, in readRepoInput) (toolkit.Result, error) {
	p := RepoFilePolicy
	clean, err := p.Clean(in.Path)
	if err != nil {
		return toolkit.Result{}, err
	}
	if err := p.Check(clean); err != nil {
		return toolkit.Result{}, err
	}
	snap, _, err := repo.OpenFor(ctx, s.src, call, in.Repo)
	var content string
	if dir, file := path.Split(clean); dir == memoryDir && isMemoryFile(file) {
		// The tenant's entries are read without a default repository too.
		if err != nil && (in.Repo != "" || !isCode(err, toolerr.ResourceNotFound)) {
			return toolkit.Result{}, err
		}
		content, err = s.memoryFile(ctx, call.Tenant, snap, clean, file)
	} else if err == nil {
		content, err = repoFile(snap, p, clean)
	}
	if err != nil {
		return toolkit.Result{}, err
	}
	out := readRepoOutput{Path: in.Path, Content: content, Exists: true, Size: len(content)}
	return toolkit.Result{Data: out, Message: fmt.Sprintf("Read %s (%d bytes)", clean, len(content))}, nil
}

// repoFile reads a committed file as UTF-8 text.
func repoFile(snap repo.View, p *pathpolicy.Policy, clean string) (string, error) {
	f, err := p.Read(snap, clean)
	if err != nil {
		return "", err
	}
	return text(clean, f.Data)
}

// memoryFile returns the memory file committed in snap (if any; nil when
// the tenant has no repository) followed by the tenant's appended entries.
// It exists when either does; the whole is held to the same 100 KB as any
// file (read_memory pages through longer ones).
func (s service) memoryFile(ctx context.Context, tenant string, snap repo.View, clean, file string) (string, error) {
	committed, found := "", false
	if snap != nil {
		c, err := repoFile(snap, RepoFilePolicy, clean)
		switch {
		case err == nil:
			committed, found = c, true
		case !isCode(err, toolerr.ResourceNotFound): // not committed is fine
			return "", err
		}
	}
	entries, err := memoryfile.Render(ctx, s.memory, tenant, file, RepoFileMaxBytes)
	if err != nil {
		return "", err
	}
	if !found && entries == "" {
		return "", toolerr.New(toolerr.ResourceNotFound, "File not found: %s (not committed, and no entries were appended)", clean).With("path", clean)
	}
	content := joinMemory(committed, entries, strings.HasSuffix(file, ".md"))
	if len(content) > RepoFileMaxBytes {
		return "", toolerr.New(toolerr.SizeLimitExceeded,
			"%s with its appended entries is over the size limit of %d bytes; page through the entries with read_memory", clean, RepoFileMaxBytes).
			With("path", clean).With("limitBytes", RepoFileMaxBytes)
	}
	return content, nil
}

// isMemoryFile reports whether name is one of the memory files.
func isMemoryFile(name string) bool {
	_, ok := memoryfile.FormatOf(name)
	return ok
}

// joinMemory puts appended entries after the committed text: on a new
// line, and for markdown after a blank line.
func joinMemory(committed, entries string, markdown bool) string {
	if committed == "" || entries == "" {
		return committed + entries
	}
	if !strings.HasSuffix(committed, "\n") {
		committed += "\n"
	}
	if markdown && !strings.HasSuffix(committed, "\n\n") {
		committed += "\n"
	}
	return committed + entries
}

// text returns data as a string, refusing what is not UTF-8 text.
func text(clean string, data []byte) (string, error) {
	if !utf8.Valid(data) {
		return "", toolerr.Field("path", "%s is not a UTF-8 text file", clean)
	}
	return string(data), nil
}

func isCode(err error, code toolerr.Code) bool {
	var te *toolerr.Error
	return errors.As(err, &te) && te.Code == code
}
