// Command complete_task is the Lambda function of the complete_task tool.
package main

import "github.com/toolshed/toolshed/shared/lambdaentry"

func main() { lambdaentry.StartTool("complete_task") }
