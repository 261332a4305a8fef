// Command sys-audit is the Lambda function of the sys-audit tool.
package main

import "github.com/toolshed/toolshed/shared/lambdaentry"

func main() { lambdaentry.StartTool("sys-audit") }
