// Package toolset is the list of tool families Toolshed serves. Adding a
// family is one line here; the local server, the tool Lambda functions and
// the CDK app all read this list.
package toolset

import (
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/tools/contextsearch"
	"github.com/toolshed/toolshed/shared/tools/fileio"
	"github.com/toolshed/toolshed/shared/tools/grep"
	"github.com/toolshed/toolshed/shared/tools/hello"
	"github.com/toolshed/toolshed/shared/tools/history"
	"github.com/toolshed/toolshed/shared/tools/memory"
	"github.com/toolshed/toolshed/shared/tools/navigate"
	"github.com/toolshed/toolshed/shared/tools/repofiles"
	"github.com/toolshed/toolshed/shared/tools/sysaudit"
	"github.com/toolshed/toolshed/shared/tools/tasks"
	"github.com/toolshed/toolshed/shared/tools/webfetch"
)

// Families are every served tool family.
var Families = []family.Family{
	hello.Family,
	sysaudit.Family,
	tasks.Family,
	memory.Family,
	repofiles.Family,
	grep.Family,
	navigate.Family,
	history.Family,
	contextsearch.Family,
	webfetch.Family,
	fileio.Family,
}

// Tools returns the canonical names of every served tool, in family order.
func Tools() []string {
	var names []string
	for _, f := range Families {
		names = append(names, f.Tools...)
	}
	return names
}
