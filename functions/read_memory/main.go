// Command read_memory is the Lambda function of the read_memory tool.
package main

import "github.com/toolshed/toolshed/shared/lambdaentry"

func main() { lambdaentry.StartTool("read_memory") }
