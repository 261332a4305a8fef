package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolshed/toolshed/shared/store"
)

var _ store.Tasks = (*taskStore)(nil)

// Attribute names of the Tasks table.
const (
	taskTenant      = "tenant"
	taskID          = "id"
	taskSeq         = "seq" // on the counter item (id = 0) only
	taskTitle       = "title"
	taskDescription = "description"
	taskStatus      = "status"
	taskCreatedAt   = "created_at"
	taskUpdatedAt   = "updated_at"
	taskCompletedAt = "completed_at"
	// A task created with an idempotency key also has claimKey.
)

// counterID is the id of each tenant's counter item; task ids start at 1.
// Ids below it are idempotency claims (taskClaimID); no reader or writer of
// tasks goes below 1.
const counterID = 0

// filteredPageSize is the DynamoDB Limit of one Query page when a status
// filter is set (DynamoDB applies Limit before the filter).
const filteredPageSize = 100

type taskStore struct {
	client *dynamodb.Client
	table  string
}

func taskKey(tenant string, id int64) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{taskTenant: attrS(tenant), taskID: attrN(id)}
}

func decodeTask(m map[string]types.AttributeValue) (store.Task, error) {
	it := item{m: m}
	t := store.Task{
		ID:          it.num(taskID),
		Title:       it.str(taskTitle),
		Description: it.optStr(taskDescription),
		Status:      store.TaskStatus(it.str(taskStatus)),
		CreatedAt:   it.time(taskCreatedAt),
		UpdatedAt:   it.time(taskUpdatedAt),
		CompletedAt: it.optTime(taskCompletedAt),
	}
	if it.err != nil {
		return store.Task{}, fmt.Errorf("decode task: %w", it.err)
	}
	return t, nil
}

func (s *taskStore) Create(ctx context.Context, tenant string, t store.NewTask, now time.Time) (store.Task, error) {
	if t.IdempotencyKey == "" {
		return s.create(ctx, tenant, t, now)
	}
	task, replayed, err := once[store.Task]{
		client: s.client,
		table:  s.table,
		claim:  taskKey(tenant, taskClaimID(t.IdempotencyKey)),
		key:    t.IdempotencyKey,
		now:    now,
		write: func(ctx context.Context) (store.Task, error) {
			return s.create(ctx, tenant, t, now)
		},
		id: func(task store.Task) string { return strconv.FormatInt(task.ID, 10) },
		load: func(ctx context.Context, id string) (store.Task, error) {
			n, err := strconv.ParseInt(id, 10, 64)
			if err != nil {
				return store.Task{}, storageErr("idempotency claim", fmt.Errorf("bad task id %q", id))
			}
			task, err := s.Get(ctx, tenant, n)
			if errors.Is(err, store.ErrNotFound) {
				return store.Task{}, fmt.Errorf("dynamodb create task: the task created with this idempotency key (id %d) was deleted: %w", n, store.ErrNotFound)
			}
			return task, err
		},
		search: dynamodb.QueryInput{
			KeyConditionExpression:    aws.String("#tenant = :tenant AND #id > :counter"),
			ExpressionAttributeNames:  map[string]string{"#tenant": taskTenant, "#id": taskID},
			ExpressionAttributeValues: map[string]types.AttributeValue{":tenant": attrS(tenant), ":counter": attrN(counterID)},
		},
		decode: decodeTask,
	}.run(ctx)
	task.Replayed = replayed
	return task, err
}

// create stores a new task under the next id, with its idempotency key
// (if any) as an attribute.
func (s *taskStore) create(ctx context.Context, tenant string, t store.NewTask, now time.Time) (store.Task, error) {
	id, err := s.nextID(ctx, tenant)
	if err != nil {
		return store.Task{}, err
	}
	now = now.UTC()
	task := store.Task{
		ID:          id,
		Title:       t.Title,
		Description: t.Description,
		Status:      store.TaskPending,
		CreatedAt:   now,
		UpdatedAt:   now,
	}
	if t.Description != nil {
		d := *t.Description
		task.Description = &d
	}
	it := taskKey(tenant, id)
	it[taskTitle] = attrS(task.Title)
	it[taskStatus] = attrS(string(task.Status))
	it[taskCreatedAt] = attrTime(now)
	it[taskUpdatedAt] = attrTime(now)
	if task.Description != nil {
		it[taskDescription] = attrS(*task.Description)
	}
	if t.IdempotencyKey != "" {
		it[claimKey] = attrS(t.IdempotencyKey)
	}
	if err := putNew(ctx, s.client, s.table, it, taskID, fmt.Sprintf("put task %d", id), "id already used"); err != nil {
		return store.Task{}, err
	}
	return task, nil
}

// nextID atomically increments the tenant's counter item and returns the
// new value.
func (s *taskStore) nextID(ctx context.Context, tenant string) (int64, error) {
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       taskKey(tenant, counterID),
		UpdateExpression:          aws.String("ADD #seq :one"),
		ExpressionAttributeNames:  map[string]string{"#seq": taskSeq},
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": attrN(1)},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, writeErr("next task id", err)
	}
	it := item{m: out.Attributes}
	id := it.num(taskSeq)
	if it.err != nil || id <= 0 {
		return 0, storageErr("next task id", fmt.Errorf("bad counter value: %v", it.err))
	}
	return id, nil
}

func (s *taskStore) Get(ctx context.Context, tenant string, id int64) (store.Task, error) {
	op := fmt.Sprintf("get task %d", id)
	if id <= counterID {
		return store.Task{}, fmt.Errorf("dynamodb %s: %w", op, store.ErrNotFound)
	}
	return getItem(ctx, s.client, s.table, taskKey(tenant, id), op, decodeTask)
}

func (s *taskStore) List(ctx context.Context, tenant string, q store.TaskQuery) (store.TaskPage, error) {
	limit := store.PageLimit(q.Limit)
	after := max(q.After, counterID) // ids > 0 also skips the counter item
	names := map[string]string{"#tenant": taskTenant, "#id": taskID}
	values := map[string]types.AttributeValue{":tenant": attrS(tenant), ":after": attrN(after)}
	var filter *string
	if q.Status != "" {
		filter = aws.String("#status = :status")
		names["#status"] = taskStatus
		values[":status"] = attrS(string(q.Status))
	}

	var minPage int32
	if filter != nil {
		minPage = filteredPageSize
	}
	tasks, more, err := queryPage(ctx, s.client, dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#tenant = :tenant AND #id > :after"),
		FilterExpression:          filter,
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}, limit, minPage, decodeTask)
	if err != nil {
		return store.TaskPage{}, storageErr("list tasks", err)
	}
	page := store.TaskPage{Tasks: tasks}
	if more {
		page.Next = tasks[len(tasks)-1].ID
	}
	return page, nil
}

func (s *taskStore) Update(ctx context.Context, tenant string, id int64, p store.TaskPatch, now time.Time) (store.Task, error) {
	names := map[string]string{"#id": taskID, "#updated": taskUpdatedAt}
	values := map[string]types.AttributeValue{":now": attrTime(now)}
	set := []string{"#updated = :now"}
	var remove []string
	if p.Title != nil {
		names["#title"] = taskTitle
		values[":title"] = attrS(*p.Title)
		set = append(set, "#title = :title")
	}
	if p.SetDescription {
		names["#desc"] = taskDescription
		if p.Description != nil {
			values[":desc"] = attrS(*p.Description)
			set = append(set, "#desc = :desc")
		} else {
			remove = append(remove, "#desc")
		}
	}
	expr := "SET " + strings.Join(set, ", ")
	if len(remove) > 0 {
		expr += " REMOVE " + strings.Join(remove, ", ")
	}
	return s.modify(ctx, fmt.Sprintf("update task %d", id), tenant, id, expr, names, values)
}

func (s *taskStore) Complete(ctx context.Context, tenant string, id int64, now time.Time) (store.Task, error) {
	return s.modify(ctx, fmt.Sprintf("complete task %d", id), tenant, id,
		"SET #status = :completed, #updated = :now, #completed = if_not_exists(#completed, :now)",
		map[string]string{"#id": taskID, "#status": taskStatus, "#updated": taskUpdatedAt, "#completed": taskCompletedAt},
		map[string]types.AttributeValue{":completed": attrS(string(store.TaskCompleted)), ":now": attrTime(now)},
	)
}

// modify runs an UpdateItem on an existing task and returns the new task.
// names must map #id to the id attribute.
func (s *taskStore) modify(ctx context.Context, op, tenant string, id int64, expr string,
	names map[string]string, values map[string]types.AttributeValue) (store.Task, error) {
	if id <= counterID {
		return store.Task{}, fmt.Errorf("dynamodb %s: %w", op, store.ErrNotFound)
	}
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       taskKey(tenant, id),
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("attribute_exists(#id)"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ReturnValues:              types.ReturnValueAllNew,
	})
	if err != nil {
		return store.Task{}, writeExistingErr(op, err)
	}
	return decodeItem(op, out.Attributes, decodeTask)
}

func (s *taskStore) Delete(ctx context.Context, tenant string, id int64) (store.Task, error) {
	op := fmt.Sprintf("delete task %d", id)
	if id <= counterID {
		return store.Task{}, fmt.Errorf("dynamodb %s: %w", op, store.ErrNotFound)
	}
	out, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                aws.String(s.table),
		Key:                      taskKey(tenant, id),
		ConditionExpression:      aws.String("attribute_exists(#id)"),
		ExpressionAttributeNames: map[string]string{"#id": taskID},
		ReturnValues:             types.ReturnValueAllOld,
	})
	if err != nil {
		return store.Task{}, writeExistingErr(op, err)
	}
	return decodeItem(op, out.Attributes, decodeTask)
}
