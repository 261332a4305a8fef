// Command hello is the Lambda function of the hello tool.
package main

import "github.com/toolshed/toolshed/shared/lambdaentry"

func main() { lambdaentry.StartTool("hello") }
