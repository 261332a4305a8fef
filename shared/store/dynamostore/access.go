package dynamostore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolshed/toolshed/shared/store"
)

var _ store.Access = (*accessStore)(nil)

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
		return store.AccessStat{}, writeErr(op, err)
	}
	st, err := decodeAccess(tenant, path, out.Attributes)
	if err != nil {
		return store.AccessStat{}, writeErr(op, err)
	}
	return st, nil
}

func (s *accessStore) Get(ctx context.Context, tenant, path string) (store.AccessStat, error) {
	op := fmt.Sprintf("get access %q", path)
	return getItem(ctx, s.client, s.table, accessKey(tenant, path), op,
		func(m map[string]types.AttributeValue) (store.AccessStat, error) {
			return decodeAccess(tenant, path, m)
		})
}
