// Command tool is the Lambda function of every tool: one artifact, deployed
// once per tool, with TOOLSHED_TOOL naming the tool the function serves.
// Only that tool's family is built.
package main

import (
	"github.com/toolshed/toolshed/shared/lambdaentry"
	"github.com/toolshed/toolshed/shared/toolset"
)

func main() { lambdaentry.StartTool(toolset.Families) }
