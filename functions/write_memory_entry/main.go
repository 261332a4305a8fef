// Command write_memory_entry is the Lambda function of the write_memory_entry tool.
package main

import "github.com/toolshed/toolshed/shared/lambdaentry"

func main() { lambdaentry.StartTool("write_memory_entry") }
