// Command delete_task is the Lambda function of the delete_task tool.
package main

import "github.com/toolshed/toolshed/shared/lambdaentry"

func main() { lambdaentry.StartTool("delete_task") }
