// Command authorizer is the API Gateway Lambda authorizer: it maps a bearer
// API key to its tenant.
package main

import "github.com/toolshed/toolshed/shared/lambdaentry"

func main() { lambdaentry.StartAuthorizer() }
