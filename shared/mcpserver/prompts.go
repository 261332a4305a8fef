package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolshed/toolshed/shared/language"
)

// Prompts a user picks from a menu (Claude Code's slash commands). Each
// composes tools and is listed, got and completed only when the request
// may call every tool it needs (its needs), so a read-only credential never
// sees record_decision. Arguments are strings on the wire; each says its
// type in its description, completes to valid values, and is checked when
// the prompt is got (-32602 naming it otherwise).

// prompt is one prompt: its definition, arguments, the tools it needs and
// how it is got.
type prompt struct {
	name, title, description string
	args                     []promptArg
	needs                    []string
	get                      func(ctx context.Context, f *features, args map[string]string) (*mcp.GetPromptResult, error)
}

// promptArg is an argument of a prompt and what it completes to.
type promptArg struct {
	name, title, description string
	required                 bool
	complete                 completer
}

// completer completes the value typed for an argument, given the other
// arguments as typed so far.
type completer func(ctx context.Context, f *features, value string, typed map[string]string) ([]string, error)

// argument returns the argument of p named name.
func (p *prompt) argument(name string) (promptArg, bool) {
	i := slices.IndexFunc(p.args, func(a promptArg) bool { return a.name == name })
	if i < 0 {
		return promptArg{}, false
	}
	return p.args[i], true
}

// definition is p as prompts/list shows it.
func (p *prompt) definition() *mcp.Prompt {
	def := &mcp.Prompt{Name: p.name, Title: p.title, Description: p.description, Icons: icons}
	for _, a := range p.args {
		def.Arguments = append(def.Arguments, &mcp.PromptArgument{Name: a.name, Title: a.title, Description: a.description, Required: a.required})
	}
	return def
}

// Argument completers: a path completes in the repository of the
// prompt's repo argument (the caller's default one without it).
var (
	completeFile completer = func(ctx context.Context, f *features, v string, typed map[string]string) ([]string, error) {
		return f.completePath(ctx, typed["repo"], v, anyPath)
	}
	completeFolder completer = func(ctx context.Context, f *features, v string, typed map[string]string) ([]string, error) {
		return f.completePath(ctx, typed["repo"], v, folderPath)
	}
	completeRepo completer = func(ctx context.Context, f *features, v string, _ map[string]string) ([]string, error) {
		return f.completeRepo(ctx, v)
	}
)

// completeOneOf completes to the choices that start with the typed value.
func completeOneOf(choices ...string) completer {
	return func(_ context.Context, _ *features, v string, _ map[string]string) ([]string, error) {
		return withPrefix(choices, v), nil
	}
}

// repoArg is the optional repo argument of the prompts that read a
// repository, as every repository tool takes it.
var repoArg = promptArg{name: "repo", title: "Repository",
	description: "Optional: which of your repositories, by name (list_repos lists them); without it, or with \"default\", your default repository", complete: completeRepo}

// decisionTypes are the types context_search reads from a decision entry.
var decisionTypes = []string{"decision", "pattern", "rule", "issue"}

// taskStatuses are list_tasks' statuses, and all.
var taskStatuses = []string{"pending", "completed", "all"}

// prompts are the served prompts (prompts/list shows them sorted by name).
var prompts = []*prompt{
	{
		name:        "explore_area",
		title:       "Explore a repository area",
		description: "Map a folder of the repository: its files and folders, the symbols it defines, and what to read first.",
		args: []promptArg{
			{name: "path", title: "Folder", description: "Folder path from the repository root (net/http); empty for the root", complete: completeFolder},
			{name: "focus", title: "Focus", description: "Optional: what you want to understand there (text)"},
			repoArg,
		},
		needs: []string{listFilesTool, findSymbolsTool, readFileTool},
		get:   exploreArea,
	},
	{
		name:        "explain_file",
		title:       "Explain a file with its dependencies",
		description: "Explain one file of the repository: the file itself, embedded, with the files it imports listed for reading.",
		args: []promptArg{
			{name: "path", title: "File", description: "File path from the repository root (net/http/server.go)", required: true, complete: completeFile},
			repoArg,
		},
		needs: []string{readFileTool},
		get:   explainFile,
	},
	{
		name:        "record_decision",
		title:       "Record a decision in memory",
		description: "Write a decision to decisions.jsonl with write_memory_entry, after you confirm the entry.",
		args: []promptArg{
			{name: "decision", title: "Decision", description: "What was decided and why (text)", required: true},
			{name: "type", title: "Type", description: "One of " + strings.Join(decisionTypes, ", ") + " (default decision)", complete: completeOneOf(decisionTypes...)},
			{name: "module", title: "Module", description: "Optional: the folder it concerns (src/server/auth)", complete: completeFolder},
		},
		needs: []string{writeMemoryTool},
		get:   recordDecision,
	},
	{
		name:        "review_tasks",
		title:       "Review open tasks",
		description: "Review the task list: group the tasks, spot duplicates and stale ones, and suggest what to do next.",
		args: []promptArg{
			{name: "status", title: "Status", description: "One of " + strings.Join(taskStatuses, ", ") + " (default pending)", complete: completeOneOf(taskStatuses...)},
		},
		needs: []string{listTasksTool},
		get:   reviewTasks,
	},
}

// addPrompts registers the prompts.
func (f *features) addPrompts(srv *mcp.Server) {
	for _, p := range prompts {
		srv.AddPrompt(p.definition(), func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if !f.visible(ctx, p.needs...) {
				return nil, invalidParams("unknown prompt %q", p.name)
			}
			args := req.Params.Arguments
			for name := range args {
				if _, ok := p.argument(name); !ok {
					return nil, invalidParams("prompt %s has no argument %q", p.name, name)
				}
			}
			for _, a := range p.args {
				if a.required && strings.TrimSpace(args[a.name]) == "" {
					return nil, invalidParams("prompt %s needs the argument %q: %s", p.name, a.name, a.description)
				}
			}
			res, err := p.get(ctx, f, args)
			if err != nil {
				return nil, f.rpcError(ctx, err, map[string]any{"prompt": p.name})
			}
			res.Description = p.title
			return res, nil
		})
	}
}

// prompt returns the prompt named name, when the request in ctx may use it.
func (f *features) prompt(ctx context.Context, name string) (*prompt, bool) {
	i := slices.IndexFunc(prompts, func(p *prompt) bool { return p.name == name })
	if i < 0 || !f.visible(ctx, prompts[i].needs...) {
		return nil, false
	}
	return prompts[i], true
}

// promptNeeds returns the tools the prompt named name needs (nil for an
// unknown prompt).
func promptNeeds(name string) []string {
	i := slices.IndexFunc(prompts, func(p *prompt) bool { return p.name == name })
	if i < 0 {
		return nil
	}
	return prompts[i].needs
}

// userText is a prompt result of one user message of text.
func userText(text string, more ...mcp.Content) *mcp.GetPromptResult {
	msgs := []*mcp.PromptMessage{}
	for _, c := range more {
		msgs = append(msgs, &mcp.PromptMessage{Role: "user", Content: c})
	}
	msgs = append(msgs, &mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: text}})
	return &mcp.GetPromptResult{Messages: msgs}
}

// exploreAreaEntries is how many entries of the folder explore_area shows.
const exploreAreaEntries = 200

func exploreArea(ctx context.Context, f *features, args map[string]string) (*mcp.GetPromptResult, error) {
	folder, repo := strings.Trim(args["path"], "/"), args["repo"]
	var out listing
	if err := f.call(ctx, listFilesTool, inRepo(repo, map[string]any{"path": folder, "depth": 2, "limit": exploreAreaEntries}), &out); err != nil {
		return nil, err
	}
	where := "the repository root"
	if folder != "" {
		where = "`" + folder + "`"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Explore %s of the repository and explain it to me.\n\n", where)
	fmt.Fprintf(&b, "Its files and folders, two levels deep (%d entries", out.Total)
	if out.NextCursor != nil {
		fmt.Fprintf(&b, "; the first %d shown", len(out.Entries))
	}
	b.WriteString("):\n")
	for _, e := range out.Entries {
		if e.Type == "folder" {
			fmt.Fprintf(&b, "- %s/\n", e.Path)
			continue
		}
		fmt.Fprintf(&b, "- %s (%s, %d lines)\n", e.Path, e.Language, e.Lines)
	}
	symbols := fmt.Sprintf(`{"path": %q, "kinds": ["function", "type", "class", "interface"]`, folder)
	if repo != "" {
		symbols += fmt.Sprintf(`, "repo": %q`, repo)
	}
	fmt.Fprintf(&b, "\nThen: call find_symbols with %s} "+
		"to see what it defines; read the entry points and the central types with read_file (startLine/endLine for long files); "+
		"follow what looks important with find_references. Finally summarize what this area is for, its main parts, how it "+
		"connects to the rest of the repository, and where to start reading.", symbols)
	if focus := strings.TrimSpace(args["focus"]); focus != "" {
		fmt.Fprintf(&b, "\n\nFocus on: %s", focus)
	}
	return userText(b.String()), nil
}

func explainFile(ctx context.Context, f *features, args map[string]string) (*mcp.GetPromptResult, error) {
	p, repo := args["path"], args["repo"]
	var out struct {
		File struct {
			Path     string `json:"path"`
			Content  string `json:"content"`
			Language string `json:"language"`
		} `json:"file"`
		Dependencies []struct {
			Path string `json:"path"`
			Type string `json:"type"`
		} `json:"dependencies"`
		DependenciesNote string `json:"dependenciesNote"`
	}
	if err := f.call(ctx, readFileTool, inRepo(repo, map[string]any{"path": p, "includeDeps": true, "maxDepth": 1}), &out); err != nil {
		return nil, err
	}
	file := textResource(repoURI(repo, out.File.Path), language.MIMEType(out.File.Language), out.File.Content).Contents[0]
	var b strings.Builder
	fmt.Fprintf(&b, "Explain %s (above): what it is for, its main parts and how they work together, and how it uses what it imports.\n", out.File.Path)
	var internal []string
	for _, d := range out.Dependencies {
		switch d.Type {
		case "external", "unresolved":
		default:
			internal = append(internal, d.Path)
		}
	}
	if len(internal) == 0 {
		b.WriteString("\nIt imports no other file of the repository.")
	} else {
		fmt.Fprintf(&b, "\nThe files of the repository it imports (read those you need with read_file, or as the resource repo://%s/<path>):\n", cmp.Or(repo, DefaultRepo))
		for _, d := range internal {
			fmt.Fprintf(&b, "- %s\n", d)
		}
	}
	if out.DependenciesNote != "" {
		fmt.Fprintf(&b, "\n(%s)", out.DependenciesNote)
	}
	return userText(b.String(), &mcp.EmbeddedResource{Resource: file}), nil
}

// oneOf returns the prompt's argument name, def when it is not given; a
// value not among values is invalid params.
func oneOf(args map[string]string, name, def string, values []string) (string, error) {
	v := args[name]
	if v == "" {
		v = def
	}
	if !slices.Contains(values, v) {
		return "", invalidParams("%s: must be one of %s, got %q", name, strings.Join(values, ", "), v)
	}
	return v, nil
}

func recordDecision(_ context.Context, _ *features, args map[string]string) (*mcp.GetPromptResult, error) {
	kind, err := oneOf(args, "type", "decision", decisionTypes)
	if err != nil {
		return nil, err
	}
	entry := fmt.Sprintf(`{"timestamp": "<now, RFC 3339>", "type": %q, "content": %q`, kind, strings.TrimSpace(args["decision"]))
	if m := strings.Trim(strings.TrimSpace(args["module"]), "/"); m != "" {
		entry += fmt.Sprintf(`, "module": %q`, m)
	}
	entry += "}"
	text := "Record this in the project's memory.\n\n" +
		"1. Restate the decision as one or two clear sentences (what was decided, and why), keeping its meaning.\n" +
		"2. Show me the entry and ask me to confirm it: memory is append-only, nothing written can be changed.\n" +
		"3. Once I confirm, call write_memory_entry with {\"file\": \"decisions.jsonl\", \"entry\": " + entry + ", " +
		"\"idempotencyKey\": \"<a new UUID>\"}, with the current time as timestamp; if the answer is lost, retry with the same idempotencyKey."
	return userText(text), nil
}

// reviewTaskLimit is how many tasks review_tasks shows (list_tasks' page
// maximum).
const reviewTaskLimit = 100

func reviewTasks(ctx context.Context, f *features, args map[string]string) (*mcp.GetPromptResult, error) {
	status, err := oneOf(args, "status", "pending", taskStatuses)
	if err != nil {
		return nil, err
	}
	q := map[string]any{"limit": reviewTaskLimit}
	if status != "all" {
		q["status"] = status
	}
	var out struct {
		Tasks []struct {
			ID          int64   `json:"id"`
			Title       string  `json:"title"`
			Description *string `json:"description"`
			Status      string  `json:"status"`
			CreatedAt   string  `json:"created_at"`
		} `json:"tasks"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := f.call(ctx, listTasksTool, q, &out); err != nil {
		return nil, err
	}
	var b strings.Builder
	which := status + " tasks"
	if status == "all" {
		which = "tasks"
	}
	if len(out.Tasks) == 0 {
		fmt.Fprintf(&b, "There are no %s. Say so, and suggest what might be worth adding as tasks (add_task) after asking me.", which)
		return userText(b.String()), nil
	}
	fmt.Fprintf(&b, "Review these %s:\n\n", which)
	for _, t := range out.Tasks {
		fmt.Fprintf(&b, "- #%d [%s] %s", t.ID, t.Status, t.Title)
		if t.Description != nil {
			fmt.Fprintf(&b, ": %s", *t.Description)
		}
		fmt.Fprintf(&b, " (created %s)\n", t.CreatedAt)
	}
	if out.NextCursor != nil {
		fmt.Fprintf(&b, "\n(Only the first %d are shown: page on with list_tasks and its cursor.)\n", len(out.Tasks))
	}
	b.WriteString("\nGroup them by theme, point out duplicates and tasks that look stale or already done, and suggest the next three to work on, " +
		"with why. Change nothing (update_task, complete_task, delete_task) unless I agree.")
	return userText(b.String()), nil
}
