// Package fileio implements the file-io tool: read_file and
// write_file of UTF-8 text files in the caller's own workspace, a sandbox
// per tenant kept by package workspace (a local directory through os.Root,
// or an S3 prefix when TOOLSHED_BUCKET is set).
//
// Errors are in the seed's words, with the reason in details.reason:
// "Access denied" (PATH_NOT_ALLOWED) for a path that tries to leave the
// workspace, "File not found" (RESOURCE_NOT_FOUND), "Encoding error"
// (INVALID_INPUT) for a file that is not UTF-8, and "Failed to write file"
// when the workspace refuses the write (its quota, a file in the way) or
// the storage fails.
package fileio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
	"github.com/toolshed/toolshed/shared/workspace"
)

// ToolName is the tool's name, as in contracts/file-io.json.
const ToolName = "file-io"

// Files is where the workspaces are (workspace.Files: a local directory
// or an S3 prefix, as the wiring chose).
type Files = workspace.Files

// Family registers file-io. Deployed, its function may get and put
// objects under workspace/ and list that prefix: the listing counts a
// tenant's files and bytes for its quota and finds files in the way of
// folders, with the bucket as the only record (see workspace.Bucket).
var Family = family.Family{
	Name:     "file-io",
	Tools:    []string{ToolName},
	Settings: family.Every(QuotaBytes, QuotaFiles),
	Grants: []family.Grant{
		family.Objects(workspace.Prefix, "s3:GetObject", "s3:PutObject"),
		family.List(workspace.Prefix),
	},
	New: func(ctx context.Context, env *wiring.Env) ([]toolkit.Tool, error) {
		quota, err := quotaOf(env.Getenv)
		if err != nil {
			return nil, err
		}
		files, err := env.Workspaces(ctx, quota)
		if err != nil {
			return nil, err
		}
		return []toolkit.Tool{Tool(files)}, nil
	},
}

// A tenant's workspace quota: 100 MiB in 1,000 files unless configured.
var (
	QuotaBytes = settings.New("TOOLSHED_WORKSPACE_QUOTA_BYTES", "104857600",
		"bytes of files a tenant's file-io workspace may hold", settings.Positive)
	QuotaFiles = settings.New("TOOLSHED_WORKSPACE_QUOTA_FILES", "1000",
		"files a tenant's file-io workspace may hold", settings.Positive)
)

// quotaOf reads the workspace quota settings.
func quotaOf(getenv func(string) string) (workspace.Quota, error) {
	bytes, err := QuotaBytes.Get(getenv)
	if err != nil {
		return workspace.Quota{}, err
	}
	files, err := QuotaFiles.Get(getenv)
	return workspace.Quota{Bytes: int64(bytes), Files: files}, err
}

// Tool returns file-io over files.
func Tool(files Files) toolkit.Tool {
	s := service{files: files}
	return toolkit.Tool{Name: ToolName, Handler: toolkit.Typed(s.run)}
}

type service struct {
	files Files
}

type input struct {
	Command string  `json:"command"`
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

type readOutput struct {
	OK       bool   `json:"ok"`
	Contents string `json:"contents"`
	Path     string `json:"path"`
	Bytes    int    `json:"bytes"`
}

type writeOutput struct {
	OK           bool   `json:"ok"`
	BytesWritten int    `json:"bytes_written"`
	Path         string `json:"path"`
}

func (s service) run(ctx context.Context, call toolkit.Call, in input) (toolkit.Result, error) {
	switch in.Command {
	case "read_file":
		return s.read(ctx, call.Tenant, in.Path)
	case "write_file":
		if in.Content == nil {
			return toolkit.Result{}, toolerr.Field("content", "is required for write_file")
		}
		return s.write(ctx, call.Tenant, in.Path, *in.Content)
	}
	return toolkit.Result{}, toolerr.Field("command", "must be read_file or write_file")
}

func (s service) read(ctx context.Context, tenant, p string) (toolkit.Result, error) {
	data, err := s.files.Read(ctx, tenant, p)
	if err != nil {
		return toolkit.Result{}, toolError(err, "Failed to read file", "File size exceeds limit of 1 MB.")
	}
	if !utf8.Valid(data) {
		return toolkit.Result{}, toolerr.New(toolerr.InvalidInput, "Encoding error").
			With("path", p).With("reason", "the file is not UTF-8 text")
	}
	out := readOutput{OK: true, Contents: string(data), Path: p, Bytes: len(data)}
	return toolkit.Result{Data: out, Message: fmt.Sprintf("Read %d bytes from %s", len(data), p)}, nil
}

func (s service) write(ctx context.Context, tenant, p, content string) (toolkit.Result, error) {
	if err := s.files.Write(ctx, tenant, p, []byte(content)); err != nil {
		return toolkit.Result{}, toolError(err, "Failed to write file", "Content size exceeds limit of 1 MB.")
	}
	out := writeOutput{OK: true, BytesWritten: len(content), Path: p}
	return toolkit.Result{Data: out, Message: fmt.Sprintf("Wrote %d bytes to %s", len(content), p)}, nil
}

// toolError maps a workspace error onto the vocabulary in the seed's
// words: failed and tooLarge are the messages for storage failures and
// files over the limit.
func toolError(err error, failed, tooLarge string) error {
	var we *workspace.Error
	if !errors.As(err, &we) {
		return err
	}
	var e *toolerr.Error
	switch we.Kind {
	case workspace.Denied:
		e = toolerr.New(toolerr.PathNotAllowed, "Access denied")
	case workspace.BadPath:
		return toolerr.Field("path", "%s", strings.TrimPrefix(we.Reason, "the path ")).With("path", we.Path)
	case workspace.NotFound:
		e = toolerr.New(toolerr.ResourceNotFound, "File not found")
	case workspace.TooLarge:
		e = toolerr.New(toolerr.SizeLimitExceeded, "%s", tooLarge).With("limitBytes", workspace.MaxFileBytes)
	case workspace.OverQuota:
		e = toolerr.New(toolerr.SizeLimitExceeded, "%s", failed)
	case workspace.Conflict:
		e = toolerr.New(toolerr.InvalidInput, "%s", failed)
	case workspace.NotRegular: // worded as the repository tools word it
		e = toolerr.New(toolerr.InvalidInput, "%s: file-io reads only regular files", we.Reason)
	default:
		e = toolerr.New(toolerr.StorageError, "%s", failed)
	}
	e = e.With("path", we.Path).With("reason", we.Reason)
	e.Cause = err // logged: the reason, and the storage's own error
	return e
}
