// Package backend opens the configured storage: the embedded bbolt file
// under the data directory (local runs) or DynamoDB (Lambda, or a local
// DynamoDB through TOOLSHED_DYNAMODB_ENDPOINT).
package backend

import (
	"context"
	"fmt"
	"path/filepath"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
)

// DBFile is the embedded database inside the data directory.
const DBFile = "toolshed.db"

// Open returns the stores and a function that releases them.
func Open(ctx context.Context, cfg config.Config) (store.Stores, func() error, error) {
	switch cfg.Store {
	case "dynamodb":
		awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return store.Stores{}, nil, fmt.Errorf("load AWS config: %w", err)
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
