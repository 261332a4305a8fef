// Package backend opens the configured storage: the embedded bbolt file
// under the data directory (local runs) or DynamoDB (Lambda, or a local
// DynamoDB through TOOLSHED_DYNAMODB_ENDPOINT).
package backend

import (
	"context"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
)

// DBFile is the embedded database inside the data directory.
const DBFile = "toolshed.db"

// Open returns the stores and a function that releases them. loadAWS
// gives the AWS SDK configuration when the backend is DynamoDB (family.Env's
// AWS, so a process loads it once).
func Open(ctx context.Context, cfg config.Config, loadAWS func(context.Context) (aws.Config, error)) (store.Stores, func() error, error) {
	switch cfg.Store {
	case "dynamodb":
		awsCfg, err := loadAWS(ctx)
		if err != nil {
			return store.Stores{}, nil, err
		}
		client := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
			if cfg.DynamoEndpoint != "" {
				o.BaseEndpoint = &cfg.DynamoEndpoint
			}
		})
		t := cfg.Tables
		st := dynamostore.New(client, dynamostore.Tables{
			Tasks: t.Tasks, Memory: t.Memory, RateLimits: t.RateLimits, Access: t.Access, APIKeys: t.APIKeys,
		})
		return st, func() error { return nil }, nil
	default:
		db, err := boltstore.Open(filepath.Join(cfg.DataDir, DBFile))
		if err != nil {
			return store.Stores{}, nil, err
		}
		return db.Stores(), db.Close, nil
	}
}
