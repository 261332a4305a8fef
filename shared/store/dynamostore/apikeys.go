package dynamostore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolshed/toolshed/shared/store"
)

var _ store.APIKeys = (*apiKeyStore)(nil)

// Attribute names of the ApiKeys table.
const (
	keyHash      = "hash"
	keyTenant    = "tenant"
	keyName      = "name"
	keyCreatedAt = "created_at"
	keyRevoked   = "revoked"
	keyRevokedAt = "revoked_at"
	keyRepos     = "repos" // a string set; absent for a key limited to no repositories
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
		CreatedAt: it.time(keyCreatedAt),
		Revoked:   it.boolean(keyRevoked),
		RevokedAt: it.optTime(keyRevokedAt),
	}
	if it.err != nil {
		return store.APIKey{}, fmt.Errorf("decode api key: %w", it.err)
	}
	if v, ok := m[keyRepos].(*types.AttributeValueMemberSS); ok {
		k.Repos = slices.Sorted(slices.Values(v.Value))
	}
	return k, nil
}

func (s *apiKeyStore) Create(ctx context.Context, k store.APIKey) error {
	it := map[string]types.AttributeValue{
		keyHash:      attrS(k.Hash),
		keyTenant:    attrS(k.Tenant),
		keyName:      attrS(k.Name),
		keyCreatedAt: attrTime(k.CreatedAt),
		keyRevoked:   &types.AttributeValueMemberBOOL{Value: k.Revoked},
	}
	if k.RevokedAt != nil {
		it[keyRevokedAt] = attrTime(*k.RevokedAt)
	}
	if len(k.Repos) > 0 {
		it[keyRepos] = &types.AttributeValueMemberSS{Value: k.Repos}
	}
	return putNew(ctx, s.client, s.table, it, keyHash, "create api key", "key exists")
}

func (s *apiKeyStore) Lookup(ctx context.Context, hash string) (store.APIKey, error) {
	return getItem(ctx, s.client, s.table, map[string]types.AttributeValue{keyHash: attrS(hash)}, "lookup api key", decodeAPIKey)
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
	if err != nil {
		return store.APIKey{}, writeExistingErr("revoke api key", err)
	}
	return decodeItem("revoke api key", out.Attributes, decodeAPIKey)
}

func (s *apiKeyStore) Delete(ctx context.Context, hash string) (store.APIKey, error) {
	out, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                aws.String(s.table),
		Key:                      map[string]types.AttributeValue{keyHash: attrS(hash)},
		ConditionExpression:      aws.String("attribute_exists(#h)"),
		ExpressionAttributeNames: map[string]string{"#h": keyHash},
		ReturnValues:             types.ReturnValueAllOld,
	})
	if err != nil {
		return store.APIKey{}, writeExistingErr("delete api key", err)
	}
	return decodeItem("delete api key", out.Attributes, decodeAPIKey)
}
