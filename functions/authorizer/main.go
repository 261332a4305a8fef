// Command authorizer is the API Gateway Lambda authorizer: it maps a bearer
// API key to its tenant, reading the API keys table in DynamoDB.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/awscall"
	"github.com/toolshed/toolshed/shared/lambdaentry"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
)

// version is the build's version (make sets it with -ldflags).
var version = "dev"

func main() {
	log, cfg, _ := lambdaentry.Begin("authorizer", version,
		"the API Gateway Lambda authorizer: a bearer API key to its tenant", nil)
	awsCfg, err := awscall.LoadConfig(context.Background())
	lambdaentry.FatalIf(log, "load AWS config", err)
	keys := dynamostore.Connect(awsCfg, cfg).APIKeys
	lambda.Start(auth.Authorizer{Keys: keys}.Handle)
}
