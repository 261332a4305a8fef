// Package dynamostore implements package store on DynamoDB (aws-sdk-go-v2).
//
// Tables and keys (declared in Schemas, from which CreateTables and the CDK
// stack make the tables):
//
//	Tasks       PK tenant (S), SK id (N). Item id = 0 of each tenant is its id
//	            counter (attribute seq). Create = UpdateItem ADD seq, then a
//	            PutItem conditional on attribute_not_exists(id). Items with
//	            id < 0 are idempotency claims (below); tasks have id >= 1.
//	Memory      PK pk (S) = tenant + "#" + file, SK id (S); conditional PutItem
//	            only: no code path updates or deletes an entry. Idempotency
//	            claims have PK "%idem#" + the entries' pk, SK the key
//	            (IsMemoryClaim tells them apart on the table's stream).
//	RateLimits  PK pk (S) = the counter key; conditional ADD count below the
//	            limit; ttl (N, epoch seconds) for clean-up only.
//	Access      PK tenant (S), SK path (S); ADD count, SET last_access.
//	ApiKeys     PK hash (S); tenant, name, created_at,
//	            revoked (BOOL), revoked_at.
//
// Every write is a single-item, conditional where it matters; there are no
// transactions (TransactWriteItems), so a local emulator can run the same
// code. Times are stored as RFC 3339 strings with nanoseconds, in UTC. Reads
// are strongly consistent.
//
// # Idempotency keys
//
// A Create or Append with an idempotency key is guarded by a claim item,
// one per tenant and key (and file, for memory): in the tenant's partition
// of the Tasks table with sort key -1 - (the first 63 bits of the key's
// sha256), or in the Memory table under the claim partition above. A claim
// holds idem_key, owner (a random token of the request holding it),
// claimed_at and, once the write is made, result (the task or entry id).
// The task or entry carries idem_key too. A call:
//
//  1. reads the claim (strongly consistent);
//  2. if there is none, puts one (conditional on attribute_not_exists),
//     makes the write and records its id in the claim (conditional on
//     owner); losing the race to put it starts over at 1;
//  3. if the claim has a result, returns what that id names (Replayed);
//     a task deleted since is ErrNotFound;
//  4. if the claim is pending (its request is still running, or stopped
//     before recording its write), looks for the write by its idem_key
//     (a Query of the tenant's partition with a filter) and, if found,
//     records it in the claim and returns it (Replayed);
//  5. if not found and the claim is at least takeoverDelay (30 s) old,
//     takes it over (UpdateItem conditional on the old owner) and writes
//     as in 2; if younger, fails with a store.InProgressError (ErrConflict)
//     that says when to try again.
//
// A write that surely failed (the service answered, nothing changed)
// releases its claim, so a retry can take it over at once; one whose
// outcome is unknown (store.ErrMaybeDone) keeps it, and a retry finds the
// write by its key or waits out the delay. The delay is far longer than any
// request's deadline, so the holder of a claim that old can no longer
// write: that is what keeps two writes from being made for one key. Two
// concurrent calls with one key make one write; the other call replays it
// or gets an InProgressError. Recording the result is best-effort: a call
// whose write committed answers success even when the record fails.
//
// Errors: a failed condition becomes the matching store sentinel; every
// other SDK error wraps store.ErrStorage and keeps the cause.
package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolshed/toolshed/shared/awscall"
	"github.com/toolshed/toolshed/shared/store"
)

// Tables names the DynamoDB tables of one deployment.
type Tables struct {
	Tasks      string
	Memory     string
	RateLimits string
	Access     string
	APIKeys    string
}

// New returns the store implementations on client and the given tables.
func New(client *dynamodb.Client, t Tables) store.Stores {
	return store.Stores{
		Tasks:    &taskStore{client: client, table: t.Tasks},
		Memory:   &memoryStore{client: client, table: t.Memory},
		Counters: &counterStore{client: client, table: t.RateLimits},
		Access:   &accessStore{client: client, table: t.Access},
		APIKeys:  &apiKeyStore{client: client, table: t.APIKeys},
	}
}

// isConditionFailed reports whether err is a failed ConditionExpression.
func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// putNew puts item into table only if no item has its key (keyAttr is
// one of the key's attributes): the conditional write every new task,
// memory entry and API key is made with. An existing item is
// store.ErrConflict, described by exists ("entry exists"); op names the
// write in errors.
func putNew(ctx context.Context, client *dynamodb.Client, table string, item map[string]types.AttributeValue, keyAttr, op, exists string) error {
	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(table),
		Item:                     item,
		ConditionExpression:      aws.String("attribute_not_exists(#k)"),
		ExpressionAttributeNames: map[string]string{"#k": keyAttr},
	})
	if isConditionFailed(err) {
		return fmt.Errorf("dynamodb %s: %s: %w", op, exists, store.ErrConflict)
	}
	if err != nil {
		return writeErr(op, err)
	}
	return nil
}

// getItem reads the item with key from table, strongly consistent, and
// decodes it; no such item is store.ErrNotFound. op names the read in
// errors.
func getItem[T any](ctx context.Context, client *dynamodb.Client, table string, key map[string]types.AttributeValue,
	op string, decode func(map[string]types.AttributeValue) (T, error)) (T, error) {
	var none T
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(table),
		Key:            key,
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return none, storageErr(op, err)
	}
	if out.Item == nil {
		return none, fmt.Errorf("dynamodb %s: %w", op, store.ErrNotFound)
	}
	return decodeItem(op, out.Item, decode)
}

// decodeItem decodes an item a read or write returned with decode; an item
// that does not decode is a storage failure. op names the call in errors.
func decodeItem[T any](op string, m map[string]types.AttributeValue,
	decode func(map[string]types.AttributeValue) (T, error)) (T, error) {
	v, err := decode(m)
	if err != nil {
		var none T
		return none, storageErr(op, err)
	}
	return v, nil
}

// writeExistingErr is the error of a write on an existing item (an
// UpdateItem or DeleteItem conditional on one of its key attributes
// existing): a failed condition means the item is not there
// (store.ErrNotFound); any other error is writeErr's. op names the write in
// errors.
func writeExistingErr(op string, err error) error {
	if isConditionFailed(err) {
		return fmt.Errorf("dynamodb %s: %w", op, store.ErrNotFound)
	}
	return writeErr(op, err)
}

// storageErr wraps the SDK error of a read as store.ErrStorage with the
// operation (package awscall says how it failed).
func storageErr(op string, err error) error {
	return awscall.Wrap("DynamoDB", "dynamodb "+op, err, false)
}

// writeErr is storageErr for a write: one sent without an answer may have
// been applied (store.ErrMaybeDone).
func writeErr(op string, err error) error {
	return awscall.Wrap("DynamoDB", "dynamodb "+op, err, true)
}

// Attribute value helpers.

func attrS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func attrN(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func attrTime(t time.Time) types.AttributeValue { return attrS(formatTime(t)) }

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// item reads typed attributes from an item, remembering the first error.
type item struct {
	m   map[string]types.AttributeValue
	err error
}

func (it *item) fail(name, want string) {
	if it.err == nil {
		it.err = fmt.Errorf("attribute %s: missing or not %s", name, want)
	}
}

func (it *item) has(name string) bool {
	_, ok := it.m[name]
	return ok
}

func (it *item) str(name string) string {
	v, ok := it.m[name].(*types.AttributeValueMemberS)
	if !ok {
		it.fail(name, "a string")
		return ""
	}
	return v.Value
}

// optStr returns nil for a missing attribute.
func (it *item) optStr(name string) *string {
	if !it.has(name) {
		return nil
	}
	s := it.str(name)
	return &s
}

func (it *item) num(name string) int64 {
	v, ok := it.m[name].(*types.AttributeValueMemberN)
	if !ok {
		it.fail(name, "a number")
		return 0
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		it.fail(name, "an integer")
	}
	return n
}

func (it *item) boolean(name string) bool {
	if !it.has(name) {
		return false
	}
	v, ok := it.m[name].(*types.AttributeValueMemberBOOL)
	if !ok {
		it.fail(name, "a boolean")
		return false
	}
	return v.Value
}

func (it *item) time(name string) time.Time {
	s := it.str(name)
	if it.err != nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		it.fail(name, "an RFC 3339 time")
		return time.Time{}
	}
	return t.UTC()
}

// optTime returns nil for a missing attribute.
func (it *item) optTime(name string) *time.Time {
	if !it.has(name) {
		return nil
	}
	t := it.time(name)
	return &t
}
