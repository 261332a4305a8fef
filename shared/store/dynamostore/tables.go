package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// tableWait bounds how long CreateTables waits for one table to be ACTIVE.
const tableWait = 2 * time.Minute

// CreateTables creates the tables of Schemas (their keys, on-demand
// billing) if they do not exist and waits until each is ACTIVE. It is for
// tests and local runs against a local DynamoDB; deployed tables come from
// the CDK stack, which builds them from Schemas too and also sets their
// TTL, stream, point-in-time recovery and retention.
func CreateTables(ctx context.Context, client *dynamodb.Client, t Tables) error {
	for _, s := range Schemas {
		if t.Name(s.Table) == "" {
			return fmt.Errorf("dynamodb create tables: a table name is empty: %+v", t)
		}
		if err := createTable(ctx, client, t.Name(s.Table), s); err != nil {
			return err
		}
	}
	for _, s := range Schemas {
		w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
			o.MinDelay = 50 * time.Millisecond
			o.MaxDelay = time.Second
		})
		if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.Name(s.Table))}, tableWait); err != nil {
			return fmt.Errorf("dynamodb wait for table %s: %w", t.Name(s.Table), err)
		}
	}
	return nil
}

// createTable creates the table name with the keys of s, unless it exists.
func createTable(ctx context.Context, client *dynamodb.Client, name string, s TableSchema) error {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		AttributeDefinitions: s.AttributeDefinitions(),
		KeySchema:            s.KeySchema(),
		BillingMode:          types.BillingModePayPerRequest,
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("dynamodb create table %s: %w", name, err)
	}
	return nil
}
