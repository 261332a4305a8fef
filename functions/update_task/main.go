// Command update_task is the Lambda function of the update_task tool.
package main

import "github.com/toolshed/toolshed/shared/lambdaentry"

func main() { lambdaentry.StartTool("update_task") }
