package dynamostore

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Test hooks: the claim a request leaves when it stops (crashes, loses
// its connection) between claiming an idempotency key and recording its
// write.

// TakeoverDelay is takeoverDelay.
const TakeoverDelay = takeoverDelay

// TaskClaimID is taskClaimID.
var TaskClaimID = taskClaimID

// PendTaskClaim writes the claim of a request that took tenant's key at
// at and recorded nothing, over any claim there was.
func PendTaskClaim(ctx context.Context, client *dynamodb.Client, t Tables, tenant, key string, at time.Time) error {
	return pendClaim(ctx, client, t.Tasks, taskKey(tenant, taskClaimID(key)), key, at)
}

// PendMemoryClaim is PendTaskClaim for an append to tenant's file.
func PendMemoryClaim(ctx context.Context, client *dynamodb.Client, t Tables, tenant, file, key string, at time.Time) error {
	return pendClaim(ctx, client, t.Memory, memoryClaimKey(tenant, file, key), key, at)
}

func pendClaim(ctx context.Context, client *dynamodb.Client, table string, claim map[string]types.AttributeValue, key string, at time.Time) error {
	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(table),
		Item:      claimItem(claim, key, "crashed-request", at),
	})
	return err
}
