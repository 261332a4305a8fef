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

var _ store.Counters = (*counterStore)(nil)

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
		return 0, false, writeErr(op, err)
	}
	it := item{m: out.Attributes}
	count := it.num(rateCount)
	if it.err != nil {
		return 0, false, storageErr(op, it.err)
	}
	return int(count), true, nil
}
