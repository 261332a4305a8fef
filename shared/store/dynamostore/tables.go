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

// keyAttr is one key attribute of a table.
type keyAttr struct {
	name string
	typ  types.ScalarAttributeType
}

// tableSchema is a table's partition key and optional sort key.
type tableSchema struct {
	name string
	pk   keyAttr
	sk   *keyAttr
}

func schemas(t Tables) []tableSchema {
	return []tableSchema{
		{name: t.Tasks, pk: keyAttr{taskTenant, types.ScalarAttributeTypeS}, sk: &keyAttr{taskID, types.ScalarAttributeTypeN}},
		{name: t.Memory, pk: keyAttr{memPK, types.ScalarAttributeTypeS}, sk: &keyAttr{memID, types.ScalarAttributeTypeS}},
		{name: t.RateLimits, pk: keyAttr{ratePK, types.ScalarAttributeTypeS}},
		{name: t.Access, pk: keyAttr{accessTenant, types.ScalarAttributeTypeS}, sk: &keyAttr{accessPath, types.ScalarAttributeTypeS}},
		{name: t.APIKeys, pk: keyAttr{keyHash, types.ScalarAttributeTypeS}},
	}
}

// CreateTables creates the five tables (on-demand billing) if they do not
// exist and waits until each is ACTIVE. It is for tests and local runs
// against a local DynamoDB; deployed tables come from the CDK stack, which
// also sets TTL, point-in-time recovery and retention.
func CreateTables(ctx context.Context, client *dynamodb.Client, t Tables) error {
	for _, s := range schemas(t) {
		if s.name == "" {
			return fmt.Errorf("dynamodb create tables: a table name is empty: %+v", t)
		}
		attrs := []types.AttributeDefinition{{AttributeName: aws.String(s.pk.name), AttributeType: s.pk.typ}}
		keys := []types.KeySchemaElement{{AttributeName: aws.String(s.pk.name), KeyType: types.KeyTypeHash}}
		if s.sk != nil {
			attrs = append(attrs, types.AttributeDefinition{AttributeName: aws.String(s.sk.name), AttributeType: s.sk.typ})
			keys = append(keys, types.KeySchemaElement{AttributeName: aws.String(s.sk.name), KeyType: types.KeyTypeRange})
		}
		_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:            aws.String(s.name),
			AttributeDefinitions: attrs,
			KeySchema:            keys,
			BillingMode:          types.BillingModePayPerRequest,
		})
		var inUse *types.ResourceInUseException
		if err != nil && !errors.As(err, &inUse) {
			return fmt.Errorf("dynamodb create table %s: %w", s.name, err)
		}
	}
	for _, s := range schemas(t) {
		w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
			o.MinDelay = 50 * time.Millisecond
			o.MaxDelay = time.Second
		})
		if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.name)}, tableWait); err != nil {
			return fmt.Errorf("dynamodb wait for table %s: %w", s.name, err)
		}
	}
	return nil
}
