package dynamostore

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/store"
)

// Connect returns the stores on the configured tables (TOOLSHED_*_TABLE)
// through a client built from awsCfg, at TOOLSHED_DYNAMODB_ENDPOINT when
// that is set (a local DynamoDB).
func Connect(awsCfg aws.Config, cfg config.Config) store.Stores {
	client := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if cfg.DynamoEndpoint != "" {
			o.BaseEndpoint = aws.String(cfg.DynamoEndpoint)
		}
	})
	t := cfg.Tables
	return New(client, Tables{Tasks: t.Tasks, Memory: t.Memory, RateLimits: t.RateLimits, Access: t.Access, APIKeys: t.APIKeys})
}
