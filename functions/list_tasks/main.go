// Command list_tasks is the Lambda function of the list_tasks tool.
package main

import "github.com/toolshed/toolshed/shared/lambdaentry"

func main() { lambdaentry.StartTool("list_tasks") }
