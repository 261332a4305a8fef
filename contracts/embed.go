// Package contracts holds the tool contracts: one JSON file per tool (input
// and output JSON Schema, MCP annotations, rate limit, timeout and examples)
// and errors.json, the error vocabulary. They are the single source for
// validation, tools/list, documentation and contract tests; shared/schema
// parses and compiles them.
package contracts

import "embed"

// FS holds every contract file: <tool>.json and errors.json.
//
//go:embed *.json
var FS embed.FS

// ErrorsFile is the name of the error vocabulary inside FS.
const ErrorsFile = "errors.json"
