package dynamostore

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolshed/toolshed/shared/config"
)

// KeyAttr is a key attribute of a table: its name and scalar type.
type KeyAttr struct {
	Name string
	Type types.ScalarAttributeType
}

// TableSchema is one table as the store needs it made. Schemas declares
// every table once: CreateTables makes local tables from it, and the CDK
// stack (infra/) its deployed ones.
type TableSchema struct {
	Table        config.Table
	PartitionKey KeyAttr
	SortKey      KeyAttr // Name "" for none
	TTLAttribute string  // the attribute DynamoDB expires items by; "" for none
	// Stream is a NEW_IMAGE stream of the table's changes (the indexer
	// reads the Memory table's).
	Stream bool
	// Durable marks a table of data worth keeping: deployed with
	// point-in-time recovery and kept when the stack goes. The others hold
	// what can be lost (rate limit counters).
	Durable bool
}

// keys returns the key attributes, the partition key first.
func (s TableSchema) keys() []KeyAttr {
	if s.SortKey.Name == "" {
		return []KeyAttr{s.PartitionKey}
	}
	return []KeyAttr{s.PartitionKey, s.SortKey}
}

// KeySchema is the table's key schema: the partition key (HASH), then the
// sort key (RANGE) if it has one.
func (s TableSchema) KeySchema() []types.KeySchemaElement {
	keyTypes := []types.KeyType{types.KeyTypeHash, types.KeyTypeRange}
	var out []types.KeySchemaElement
	for i, k := range s.keys() {
		out = append(out, types.KeySchemaElement{AttributeName: aws.String(k.Name), KeyType: keyTypes[i]})
	}
	return out
}

// AttributeDefinitions are the types of the key attributes, in the order
// of KeySchema.
func (s TableSchema) AttributeDefinitions() []types.AttributeDefinition {
	var out []types.AttributeDefinition
	for _, k := range s.keys() {
		out = append(out, types.AttributeDefinition{AttributeName: aws.String(k.Name), AttributeType: k.Type})
	}
	return out
}

// Schemas are the tables of a deployment (see the package comment for
// what their items hold).
var Schemas = []TableSchema{
	{
		Table:        config.TasksTable,
		PartitionKey: KeyAttr{taskTenant, types.ScalarAttributeTypeS},
		SortKey:      KeyAttr{taskID, types.ScalarAttributeTypeN},
		Durable:      true,
	},
	{
		Table:        config.MemoryTable,
		PartitionKey: KeyAttr{memPK, types.ScalarAttributeTypeS},
		SortKey:      KeyAttr{memID, types.ScalarAttributeTypeS},
		Stream:       true,
		Durable:      true,
	},
	{
		Table:        config.RateLimitsTable,
		PartitionKey: KeyAttr{ratePK, types.ScalarAttributeTypeS},
		TTLAttribute: rateTTL,
	},
	{
		Table:        config.AccessTable,
		PartitionKey: KeyAttr{accessTenant, types.ScalarAttributeTypeS},
		SortKey:      KeyAttr{accessPath, types.ScalarAttributeTypeS},
		Durable:      true,
	},
	{
		Table:        config.APIKeysTable,
		PartitionKey: KeyAttr{keyHash, types.ScalarAttributeTypeS},
		Durable:      true,
	},
}

// Name returns the name t gives table ("" for a table it does not know).
func (t Tables) Name(table config.Table) string {
	switch table {
	case config.TasksTable:
		return t.Tasks
	case config.MemoryTable:
		return t.Memory
	case config.RateLimitsTable:
		return t.RateLimits
	case config.AccessTable:
		return t.Access
	case config.APIKeysTable:
		return t.APIKeys
	}
	return ""
}
