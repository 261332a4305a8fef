package dynamostore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolshed/toolshed/shared/store"
)

// Idempotency keys: how a Create or Append with a key happens once (the
// package doc has the protocol).

// takeoverDelay is how old a claim that names no result must be before
// another request with the key may take it over. It is far longer than
// any call's deadline (a tool's is 5 s, and each AWS call is bounded
// within it), so the request that made the claim has by then either
// written or never will.
const takeoverDelay = 30 * time.Second

// claimTries bounds how often one call starts over after losing a race on
// a claim (another request made or took it between our read and write).
const claimTries = 3

// Attribute names of claim items. claimKey is also on the task or memory
// entry that a write with a key made, so that a write whose request ended
// before recording it in the claim can be found.
const (
	claimKey    = "idem_key"   // the idempotency key
	claimOwner  = "owner"      // random token of the request holding the claim
	claimAt     = "claimed_at" // when it was claimed or taken over
	claimResult = "result"     // the id of what the write made, once recorded
)

// memoryClaimPrefix starts the partition key of the Memory table's claim
// items: "%idem#" + memoryPK(tenant, file). memoryPK escapes every "%" of a
// tenant as "%25", so no entry's partition key starts with "%i".
const memoryClaimPrefix = "%idem#"

// IsMemoryClaim reports whether a Memory table item's partition key (pk)
// is a claim's, not an entry's (the table's stream carries both).
func IsMemoryClaim(pk string) bool { return strings.HasPrefix(pk, memoryClaimPrefix) }

func memoryClaimKey(tenant, file, key string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{memPK: attrS(memoryClaimPrefix + memoryPK(tenant, file)), memID: attrS(key)}
}

// taskClaimID is the sort key of a key's claim item in the tenant's
// partition of the Tasks table: a negative number from the key's sha256,
// below every task id and the counter (0). The claim also holds the key
// itself, so a collision of two keys' numbers is told apart (and refused).
func taskClaimID(key string) int64 {
	sum := sha256.Sum256([]byte(key))
	return -1 - int64(binary.BigEndian.Uint64(sum[:8])>>1)
}

// once is one write with an idempotency key: the claim item at claim
// (its primary key) and what to do with the write it guards.
type once[T any] struct {
	client *dynamodb.Client
	table  string
	claim  map[string]types.AttributeValue
	key    string
	now    time.Time
	// write makes the write, with claimKey set to the key.
	write func(ctx context.Context) (T, error)
	// id is the id of what a write made, as the claim records it.
	id func(T) string
	// load returns what an earlier write recorded as id made.
	load func(ctx context.Context, id string) (T, error)
	// search is the Query of the partition the writes go to (its key
	// condition, attribute names and values; find adds the table and the
	// filter on the key).
	search dynamodb.QueryInput
	// decode reads an item a write made.
	decode func(map[string]types.AttributeValue) (T, error)
}

// errLostRace is what a try says when another request made, took over
// or settled the claim between its read and its write: read it again.
var errLostRace = errors.New("the idempotency claim changed while read")

// run makes the write once per key. It returns what the write made, or
// what an earlier one with the key made (replayed).
func (o once[T]) run(ctx context.Context) (v T, replayed bool, err error) {
	for range claimTries {
		v, replayed, err = o.try(ctx)
		if !errors.Is(err, errLostRace) {
			return v, replayed, err
		}
	}
	var none T
	return none, false, fmt.Errorf("dynamodb idempotency claim: it changed %d times while read: %w", claimTries,
		&store.InProgressError{RetryAfter: time.Second})
}

// try reads the claim once and acts on it: it claims a free key and makes
// the write, or settles a claim that is there (settle).
func (o once[T]) try(ctx context.Context) (v T, replayed bool, err error) {
	out, err := o.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(o.table),
		Key:            o.claim,
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return v, false, storageErr("get idempotency claim", err)
	}
	if out.Item == nil {
		v, err = o.claimAndWrite(ctx)
		return v, false, err
	}
	return o.settle(ctx, out.Item)
}

// claimAndWrite claims a free key and makes the write.
func (o once[T]) claimAndWrite(ctx context.Context) (v T, err error) {
	owner := newOwner()
	_, err = o.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(o.table),
		Item:                     claimItem(o.claim, o.key, owner, o.now),
		ConditionExpression:      aws.String("attribute_not_exists(#key)"),
		ExpressionAttributeNames: map[string]string{"#key": claimKey},
	})
	if isConditionFailed(err) {
		return v, errLostRace // another request claimed it first
	}
	if err != nil {
		// Even if it was applied, no task or entry was made: the claim
		// alone is invisible, and a retry resolves it.
		return v, storageErr("put idempotency claim", err)
	}
	return o.writeOwned(ctx, owner)
}

// settle acts on the claim that is there (claim, as read): it replays the
// write the claim records, or one found by its key; fails with an
// InProgressError while a pending claim is younger than takeoverDelay;
// and takes an older one over and makes the write.
func (o once[T]) settle(ctx context.Context, claim map[string]types.AttributeValue) (v T, replayed bool, err error) {
	it := item{m: claim}
	key, owner, at := it.str(claimKey), it.str(claimOwner), it.time(claimAt)
	result := it.optStr(claimResult)
	if it.err != nil {
		return v, false, storageErr("decode idempotency claim", it.err)
	}
	if key != o.key {
		return v, false, storageErr("idempotency claim", fmt.Errorf("the claim holds another key whose hash is the same"))
	}
	if result != nil {
		v, err = o.load(ctx, *result)
		return v, true, err
	}
	// Pending: the request that claimed the key is still running, or
	// ended without recording its write (which it may have made).
	made, found, err := o.find(ctx)
	if err != nil {
		return v, false, storageErr("find write by idempotency key", err)
	}
	if found {
		o.record(ctx, owner, o.id(made))
		return made, true, nil
	}
	if age := o.now.Sub(at); age < takeoverDelay {
		// (A claim from the future, by a clock ahead of ours, is waited
		// for no longer than a claim made now.)
		wait := min(takeoverDelay-age, takeoverDelay)
		return v, false, fmt.Errorf("dynamodb idempotency claim: %w", &store.InProgressError{RetryAfter: wait})
	}
	v, err = o.takeOverAndWrite(ctx, owner)
	return v, false, err
}

// takeOverAndWrite takes over the pending claim that owner holds and
// makes the write.
func (o once[T]) takeOverAndWrite(ctx context.Context, owner string) (v T, err error) {
	newOwner := newOwner()
	err = o.updateHeldClaim(ctx, owner, "SET #owner = :new, #at = :now",
		map[string]string{"#at": claimAt},
		map[string]types.AttributeValue{":new": attrS(newOwner), ":now": attrTime(o.now)})
	if isConditionFailed(err) {
		return v, errLostRace // another request took it over or recorded a result
	}
	if err != nil {
		return v, storageErr("take over idempotency claim", err) // as for the put in claimAndWrite
	}
	return o.writeOwned(ctx, newOwner)
}

// writeOwned makes the write under a claim that owner holds and records
// it in the claim. A write that surely failed releases the claim, so that
// a retry need not wait for the takeover delay; one whose outcome is
// unknown keeps it, and a retry finds the write by its key or takes the
// claim over when the delay has passed.
func (o once[T]) writeOwned(ctx context.Context, owner string) (T, error) {
	v, err := o.write(ctx)
	if err != nil {
		if !errors.Is(err, store.ErrMaybeDone) && ctx.Err() == nil {
			o.release(ctx, owner)
		}
		return v, err
	}
	o.record(ctx, owner, o.id(v))
	return v, nil
}

// record notes in the claim what the write made, if owner still holds it.
// It is best-effort: the write has been made and is answered either way,
// and a later request with the key finds it by its key attribute.
func (o once[T]) record(ctx context.Context, owner, id string) {
	_ = o.updateHeldClaim(ctx, owner, "SET #result = :id",
		map[string]string{}, map[string]types.AttributeValue{":id": attrS(id)})
}

// release makes a claim whose write failed free to take over at once (its
// time becomes the zero time). Best-effort: if it fails, the takeover
// delay frees the claim.
func (o once[T]) release(ctx context.Context, owner string) {
	_ = o.updateHeldClaim(ctx, owner, "SET #at = :zero",
		map[string]string{"#at": claimAt}, map[string]types.AttributeValue{":zero": attrTime(time.Time{})})
}

// updateHeldClaim applies update to the claim on the condition that owner
// holds it and it records no result yet. names and values are the
// update's own attribute names and values (the condition adds its own).
func (o once[T]) updateHeldClaim(ctx context.Context, owner, update string, names map[string]string, values map[string]types.AttributeValue) error {
	names["#owner"], names["#result"] = claimOwner, claimResult
	values[":owner"] = attrS(owner)
	_, err := o.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(o.table),
		Key:                       o.claim,
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String("#owner = :owner AND attribute_not_exists(#result)"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	return err
}

// claimItem is a claim that owner made at at: its primary key (claim)
// with the key and no result.
func claimItem(claim map[string]types.AttributeValue, key, owner string, at time.Time) map[string]types.AttributeValue {
	it := make(map[string]types.AttributeValue, len(claim)+3)
	for k, v := range claim {
		it[k] = v
	}
	it[claimKey] = attrS(key)
	it[claimOwner] = attrS(owner)
	it[claimAt] = attrTime(at)
	return it
}

func newOwner() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// find looks for a write that carries the key: it runs search page by
// page with a filter on the key attribute and decodes the first item that
// has it. found is false when there is none.
func (o once[T]) find(ctx context.Context) (v T, found bool, err error) {
	in := o.search
	in.TableName = aws.String(o.table)
	in.FilterExpression = aws.String("#idemkey = :idemkey")
	in.ExpressionAttributeNames = map[string]string{"#idemkey": claimKey}
	maps.Copy(in.ExpressionAttributeNames, o.search.ExpressionAttributeNames)
	in.ExpressionAttributeValues = map[string]types.AttributeValue{":idemkey": attrS(o.key)}
	maps.Copy(in.ExpressionAttributeValues, o.search.ExpressionAttributeValues)
	in.ConsistentRead = aws.Bool(true)
	for {
		out, err := o.client.Query(ctx, &in)
		if err != nil {
			return v, false, err
		}
		if len(out.Items) > 0 {
			v, err = o.decode(out.Items[0])
			return v, err == nil, err
		}
		if out.LastEvaluatedKey == nil {
			return v, false, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
