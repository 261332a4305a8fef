package dynamostore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolshed/toolshed/shared/store"
)

var _ store.Memory = (*memoryStore)(nil)

// Attribute names of the Memory table.
const (
	memPK        = "pk" // tenant + "#" + file
	memID        = "id"
	memTenant    = "tenant"
	memFile      = "file"
	memContent   = "content"
	memCreatedAt = "created_at"
)

type memoryStore struct {
	client *dynamodb.Client
	table  string
}

// memoryPK is tenant + "#" + file. A "%" or "#" in the tenant is escaped
// (%25, %23) so the first "#" always ends the tenant and two tenants' keys
// can never meet; ordinary tenant names are unchanged.
func memoryPK(tenant, file string) string {
	t := strings.ReplaceAll(tenant, "%", "%25")
	t = strings.ReplaceAll(t, "#", "%23")
	return t + "#" + file
}

func (s *memoryStore) Append(ctx context.Context, tenant, file, content string, now time.Time) (store.MemoryEntry, error) {
	e := store.NewMemoryEntry(tenant, file, content, now)
	op := fmt.Sprintf("append memory %s", e.ID)
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table),
		Item: map[string]types.AttributeValue{
			memPK:        attrS(memoryPK(tenant, file)),
			memID:        attrS(e.ID),
			memTenant:    attrS(tenant),
			memFile:      attrS(file),
			memContent:   attrS(content),
			memCreatedAt: attrTime(e.CreatedAt),
		},
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": memPK},
	})
	if isConditionFailed(err) {
		return store.MemoryEntry{}, fmt.Errorf("dynamodb %s: entry exists: %w", op, store.ErrConflict)
	}
	if err != nil {
		return store.MemoryEntry{}, writeErr(op, err)
	}
	return e, nil
}

func (s *memoryStore) List(ctx context.Context, tenant, file string, q store.MemoryQuery) (store.MemoryPage, error) {
	limit := store.PageLimit(q.Limit)
	names := map[string]string{"#pk": memPK}
	values := map[string]types.AttributeValue{":pk": attrS(memoryPK(tenant, file))}
	cond := "#pk = :pk"
	if q.After != "" {
		cond += " AND #id > :after"
		names["#id"] = memID
		values[":after"] = attrS(q.After)
	}

	entries, more, err := queryPage(ctx, s.client, dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}, limit, 0, func(m map[string]types.AttributeValue) (store.MemoryEntry, error) {
		it := item{m: m}
		e := store.MemoryEntry{
			Tenant:    tenant,
			File:      file,
			ID:        it.str(memID),
			Content:   it.str(memContent),
			CreatedAt: it.time(memCreatedAt),
		}
		if it.err != nil {
			return store.MemoryEntry{}, fmt.Errorf("decode entry: %w", it.err)
		}
		return e, nil
	})
	if err != nil {
		return store.MemoryPage{}, storageErr("list memory", err)
	}
	page := store.MemoryPage{Entries: entries}
	if more {
		page.Next = entries[len(entries)-1].ID
	}
	return page, nil
}
