// Command add_task is the Lambda function of the add_task tool.
package main

import "github.com/toolshed/toolshed/shared/lambdaentry"

func main() { lambdaentry.StartTool("add_task") }
