package dynamostore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// queryPage runs in (a Query) until it has limit+1 items or the partition
// ends, decoding each item. It returns at most limit items and whether more
// exist; the extra item only tells that. DynamoDB applies Limit before any
// FilterExpression, so minPageSize keeps filtered queries from crawling one
// item at a time.
func queryPage[T any](ctx context.Context, client *dynamodb.Client, in dynamodb.QueryInput, limit int, minPageSize int32,
	decode func(map[string]types.AttributeValue) (T, error)) ([]T, bool, error) {
	want := limit + 1
	items := []T{}
	for {
		in.Limit = aws.Int32(max(int32(want-len(items)), minPageSize))
		in.ConsistentRead = aws.Bool(true)
		out, err := client.Query(ctx, &in)
		if err != nil {
			return nil, false, err
		}
		for _, m := range out.Items {
			v, err := decode(m)
			if err != nil {
				return nil, false, err
			}
			items = append(items, v)
		}
		if len(items) >= want || out.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	if len(items) > limit {
		return items[:limit], true, nil
	}
	return items, false, nil
}
