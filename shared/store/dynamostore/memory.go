package dynamostore

import (
	"context"
	"errors"
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
	// An entry appended with an idempotency key also has claimKey.
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

func (s *memoryStore) Append(ctx context.Context, tenant, file string, ne store.NewEntry, now time.Time) (store.MemoryEntry, error) {
	if ne.IdempotencyKey == "" {
		return s.append(ctx, tenant, file, ne, now)
	}
	decode := func(m map[string]types.AttributeValue) (store.MemoryEntry, error) {
		return decodeEntry(tenant, file, m)
	}
	e, replayed, err := once[store.MemoryEntry]{
		client: s.client,
		table:  s.table,
		claim:  memoryClaimKey(tenant, file, ne.IdempotencyKey),
		key:    ne.IdempotencyKey,
		now:    now,
		write: func(ctx context.Context) (store.MemoryEntry, error) {
			return s.append(ctx, tenant, file, ne, now)
		},
		id: func(e store.MemoryEntry) string { return e.ID },
		load: func(ctx context.Context, id string) (store.MemoryEntry, error) {
			key := map[string]types.AttributeValue{memPK: attrS(memoryPK(tenant, file)), memID: attrS(id)}
			e, err := getItem(ctx, s.client, s.table, key, "get memory entry "+id, decode)
			if errors.Is(err, store.ErrNotFound) {
				return store.MemoryEntry{}, fmt.Errorf("dynamodb append memory: the entry appended with this idempotency key (id %s) is missing: %w", id, store.ErrNotFound)
			}
			return e, err
		},
		search: dynamodb.QueryInput{
			KeyConditionExpression:    aws.String("#pk = :pk"),
			ExpressionAttributeNames:  map[string]string{"#pk": memPK},
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": attrS(memoryPK(tenant, file))},
		},
		decode: decode,
	}.run(ctx)
	e.Replayed = replayed
	return e, err
}

// append puts a new entry, with its idempotency key (if any) as an
// attribute.
func (s *memoryStore) append(ctx context.Context, tenant, file string, ne store.NewEntry, now time.Time) (store.MemoryEntry, error) {
	e := store.NewMemoryEntry(tenant, file, ne.Content, now)
	op := fmt.Sprintf("append memory %s", e.ID)
	it := map[string]types.AttributeValue{
		memPK:        attrS(memoryPK(tenant, file)),
		memID:        attrS(e.ID),
		memTenant:    attrS(tenant),
		memFile:      attrS(file),
		memContent:   attrS(ne.Content),
		memCreatedAt: attrTime(e.CreatedAt),
	}
	if ne.IdempotencyKey != "" {
		it[claimKey] = attrS(ne.IdempotencyKey)
	}
	if err := putNew(ctx, s.client, s.table, it, memPK, op, "entry exists"); err != nil {
		return store.MemoryEntry{}, err
	}
	return e, nil
}

// decodeEntry reads a memory entry item of tenant's file.
func decodeEntry(tenant, file string, m map[string]types.AttributeValue) (store.MemoryEntry, error) {
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
		return decodeEntry(tenant, file, m)
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
