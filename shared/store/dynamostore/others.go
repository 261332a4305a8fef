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

var (
	_ store.Memory   = (*memoryStore)(nil)
	_ store.Counters = (*counterStore)(nil)
	_ store.Access   = (*accessStore)(nil)
	_ store.APIKeys  = (*apiKeyStore)(nil)
)

// ---- memory ----

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
	e := store.MemoryEntry{
		Tenant:    tenant,
		File:      file,
		ID:        store.NewMemoryID(now),
		Content:   content,
		CreatedAt: now.UTC(),
	}
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
		return store.MemoryEntry{}, storageErr(op, err)
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

// ---- rate counters ----

// Attribute names of the RateLimits table.
const (
	ratePK    = "pk"
	rateCount = "count"
	rateTTL   = "ttl" // epoch seconds; the table's TTL attribute
)

type counterStore struct {
	client *dynamodb.Client
	table  string
}

func (s *counterStore) Increment(ctx context.Context, key string, limit int, expires time.Time) (int, bool, error) {
	if limit <= 0 {
		return 0, false, nil
	}
	op := fmt.Sprintf("increment counter %q", key)
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.table),
		Key:                 map[string]types.AttributeValue{ratePK: attrS(key)},
		UpdateExpression:    aws.String("ADD #c :one SET #t = if_not_exists(#t, :ttl)"),
		ConditionExpression: aws.String("attribute_not_exists(#c) OR #c < :limit"),
		ExpressionAttributeNames: map[string]string{
			"#c": rateCount,
			"#t": rateTTL,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one":   attrN(1),
			":ttl":   attrN(expires.Unix()),
			":limit": attrN(int64(limit)),
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	if isConditionFailed(err) {
		return limit, false, nil
	}
	if err != nil {
		return 0, false, storageErr(op, err)
	}
	it := item{m: out.Attributes}
	count := it.num(rateCount)
	if it.err != nil {
		return 0, false, storageErr(op, it.err)
	}
	return int(count), true, nil
}

// ---- access ----

// Attribute names of the Access table.
const (
	accessTenant     = "tenant"
	accessPath       = "path"
	accessCount      = "count"
	accessLastAccess = "last_access"
)

type accessStore struct {
	client *dynamodb.Client
	table  string
}

func accessKey(tenant, path string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{accessTenant: attrS(tenant), accessPath: attrS(path)}
}

func decodeAccess(tenant, path string, m map[string]types.AttributeValue) (store.AccessStat, error) {
	it := item{m: m}
	st := store.AccessStat{
		Tenant:     tenant,
		Path:       path,
		Count:      it.num(accessCount),
		LastAccess: it.time(accessLastAccess),
	}
	if it.err != nil {
		return store.AccessStat{}, fmt.Errorf("decode access: %w", it.err)
	}
	return st, nil
}

func (s *accessStore) Record(ctx context.Context, tenant, path string, at time.Time) (store.AccessStat, error) {
	op := fmt.Sprintf("record access %q", path)
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       accessKey(tenant, path),
		UpdateExpression:          aws.String("ADD #c :one SET #la = :at"),
		ExpressionAttributeNames:  map[string]string{"#c": accessCount, "#la": accessLastAccess},
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": attrN(1), ":at": attrTime(at)},
		ReturnValues:              types.ReturnValueAllNew,
	})
	if err != nil {
		return store.AccessStat{}, storageErr(op, err)
	}
	st, err := decodeAccess(tenant, path, out.Attributes)
	if err != nil {
		return store.AccessStat{}, storageErr(op, err)
	}
	return st, nil
}

func (s *accessStore) Get(ctx context.Context, tenant, path string) (store.AccessStat, error) {
	op := fmt.Sprintf("get access %q", path)
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            accessKey(tenant, path),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return store.AccessStat{}, storageErr(op, err)
	}
	if out.Item == nil {
		return store.AccessStat{}, fmt.Errorf("dynamodb %s: %w", op, store.ErrNotFound)
	}
	st, err := decodeAccess(tenant, path, out.Item)
	if err != nil {
		return store.AccessStat{}, storageErr(op, err)
	}
	return st, nil
}

// ---- api keys ----

// Attribute names of the ApiKeys table.
const (
	keyHash      = "hash"
	keyTenant    = "tenant"
	keyName      = "name"
	keyScopes    = "scopes" // L of S (a string set cannot be empty)
	keyCreatedAt = "created_at"
	keyRevoked   = "revoked"
	keyRevokedAt = "revoked_at"
)

type apiKeyStore struct {
	client *dynamodb.Client
	table  string
}

func decodeAPIKey(m map[string]types.AttributeValue) (store.APIKey, error) {
	it := item{m: m}
	k := store.APIKey{
		Hash:      it.str(keyHash),
		Tenant:    it.str(keyTenant),
		Name:      it.str(keyName),
		Scopes:    it.strings(keyScopes),
		CreatedAt: it.time(keyCreatedAt),
		Revoked:   it.boolean(keyRevoked),
		RevokedAt: it.optTime(keyRevokedAt),
	}
	if it.err != nil {
		return store.APIKey{}, fmt.Errorf("decode api key: %w", it.err)
	}
	return k, nil
}

func (s *apiKeyStore) Create(ctx context.Context, k store.APIKey) error {
	scopes := make([]types.AttributeValue, 0, len(k.Scopes))
	for _, sc := range k.Scopes {
		scopes = append(scopes, attrS(sc))
	}
	it := map[string]types.AttributeValue{
		keyHash:      attrS(k.Hash),
		keyTenant:    attrS(k.Tenant),
		keyName:      attrS(k.Name),
		keyScopes:    &types.AttributeValueMemberL{Value: scopes},
		keyCreatedAt: attrTime(k.CreatedAt),
		keyRevoked:   &types.AttributeValueMemberBOOL{Value: k.Revoked},
	}
	if k.RevokedAt != nil {
		it[keyRevokedAt] = attrTime(*k.RevokedAt)
	}
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(s.table),
		Item:                     it,
		ConditionExpression:      aws.String("attribute_not_exists(#h)"),
		ExpressionAttributeNames: map[string]string{"#h": keyHash},
	})
	if isConditionFailed(err) {
		return fmt.Errorf("dynamodb create api key: key exists: %w", store.ErrConflict)
	}
	if err != nil {
		return storageErr("create api key", err)
	}
	return nil
}

func (s *apiKeyStore) Lookup(ctx context.Context, hash string) (store.APIKey, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            map[string]types.AttributeValue{keyHash: attrS(hash)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return store.APIKey{}, storageErr("lookup api key", err)
	}
	if out.Item == nil {
		return store.APIKey{}, fmt.Errorf("dynamodb lookup api key: %w", store.ErrNotFound)
	}
	k, err := decodeAPIKey(out.Item)
	if err != nil {
		return store.APIKey{}, storageErr("lookup api key", err)
	}
	return k, nil
}

func (s *apiKeyStore) List(ctx context.Context) ([]store.APIKey, error) {
	keys := []store.APIKey{}
	p := dynamodb.NewScanPaginator(s.client, &dynamodb.ScanInput{
		TableName:      aws.String(s.table),
		ConsistentRead: aws.Bool(true),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, storageErr("list api keys", err)
		}
		for _, m := range out.Items {
			k, err := decodeAPIKey(m)
			if err != nil {
				return nil, storageErr("list api keys", err)
			}
			keys = append(keys, k)
		}
	}
	store.SortAPIKeys(keys)
	return keys, nil
}

func (s *apiKeyStore) Revoke(ctx context.Context, hash string, at time.Time) (store.APIKey, error) {
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.table),
		Key:                 map[string]types.AttributeValue{keyHash: attrS(hash)},
		UpdateExpression:    aws.String("SET #r = :true, #ra = if_not_exists(#ra, :at)"),
		ConditionExpression: aws.String("attribute_exists(#h)"),
		ExpressionAttributeNames: map[string]string{
			"#h":  keyHash,
			"#r":  keyRevoked,
			"#ra": keyRevokedAt,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":true": &types.AttributeValueMemberBOOL{Value: true},
			":at":   attrTime(at),
		},
		ReturnValues: types.ReturnValueAllNew,
	})
	if isConditionFailed(err) {
		return store.APIKey{}, fmt.Errorf("dynamodb revoke api key: %w", store.ErrNotFound)
	}
	if err != nil {
		return store.APIKey{}, storageErr("revoke api key", err)
	}
	k, err := decodeAPIKey(out.Attributes)
	if err != nil {
		return store.APIKey{}, storageErr("revoke api key", err)
	}
	return k, nil
}
