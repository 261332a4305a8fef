package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/jsii-runtime-go"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/workspace"
)

// attributeTypes are the CDK names of the key attribute types.
var attributeTypes = map[types.ScalarAttributeType]awsdynamodb.AttributeType{
	types.ScalarAttributeTypeS: awsdynamodb.AttributeType_STRING,
	types.ScalarAttributeTypeN: awsdynamodb.AttributeType_NUMBER,
	types.ScalarAttributeTypeB: awsdynamodb.AttributeType_BINARY,
}

// Object versions the bucket keeps: a file-io workspace's and an index's
// overwritten or deleted objects are gone this many days later (a
// tenant's delete is a delete); an upload left incomplete is aborted after
// as many.
const (
	replacedObjectDays   = 1
	incompleteUploadDays = 1
)

// newStorage creates the DynamoDB tables, as dynamostore.Schemas declares
// them, and the bucket of snapshots, indexes and workspaces.
func (d *deployment) newStorage() {
	d.tables = make(map[config.Table]awsdynamodb.Table, len(dynamostore.Schemas))
	for _, schema := range dynamostore.Schemas {
		d.tables[schema.Table] = newTable(d.stack, schema)
	}
	d.bucket = awss3.NewBucket(d.stack, jsii.String("SnapshotBucket"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		EnforceSSL:        jsii.Bool(true),
		Versioned:         jsii.Bool(true),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
		LifecycleRules:    bucketLifecycle(float64(d.opts.SnapshotRetentionDays)),
	})
}

// newTable creates one on-demand DynamoDB table as its schema declares
// it. A durable table has point-in-time recovery and deletion protection,
// and is kept when the stack goes.
func newTable(stack awscdk.Stack, schema dynamostore.TableSchema) awsdynamodb.Table {
	props := &awsdynamodb.TableProps{
		PartitionKey:  cdkAttribute(schema.PartitionKey),
		BillingMode:   awsdynamodb.BillingMode_PAY_PER_REQUEST,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	}
	if schema.SortKey.Name != "" {
		props.SortKey = cdkAttribute(schema.SortKey)
	}
	if schema.TTLAttribute != "" {
		props.TimeToLiveAttribute = jsii.String(schema.TTLAttribute)
	}
	if schema.Stream {
		props.Stream = awsdynamodb.StreamViewType_NEW_IMAGE
	}
	if schema.Durable {
		props.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
		props.DeletionProtection = jsii.Bool(true)
		props.PointInTimeRecoverySpecification = &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		}
	}
	return awsdynamodb.NewTable(stack, jsii.String(string(schema.Table)+"Table"), props)
}

// cdkAttribute is a key attribute as CDK names it.
func cdkAttribute(k dynamostore.KeyAttr) *awsdynamodb.Attribute {
	return &awsdynamodb.Attribute{Name: jsii.String(k.Name), Type: attributeTypes[k.Type]}
}

// bucketLifecycle keeps old snapshots for snapshotDays: scripts/snapshot
// tags a zip "retired" when the pointer leaves it, and a retired zip is
// deleted once it is that old; overwritten or deleted versions under
// snapshots/ (the pointer's history) go the same number of days after
// they stop being current. The current snapshot is never expired.
// Replaced versions under workspace/ and indexes/ go after
// replacedObjectDays, and incomplete uploads anywhere are aborted.
func bucketLifecycle(snapshotDays float64) *[]*awss3.LifecycleRule {
	rules := []*awss3.LifecycleRule{
		{
			Id:         jsii.String("ExpireRetiredSnapshots"),
			Prefix:     jsii.String(repo.Prefix),
			TagFilters: &map[string]interface{}{repo.StateTag: repo.Retired},
			Expiration: awscdk.Duration_Days(jsii.Number(snapshotDays)),
		},
		replacedVersions("ExpireOldSnapshotVersions", repo.Prefix, snapshotDays),
		replacedVersions("ExpireOldWorkspaceVersions", workspace.Prefix, replacedObjectDays),
		replacedVersions("ExpireOldIndexVersions", indexfile.BucketPrefix, replacedObjectDays),
		{
			Id:                                  jsii.String("AbortIncompleteUploads"),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(incompleteUploadDays)),
		},
	}
	return &rules
}

// replacedVersions expires the versions under prefix that stopped being
// current days ago, and the delete markers left with no version.
func replacedVersions(id, prefix string, days float64) *awss3.LifecycleRule {
	return &awss3.LifecycleRule{
		Id:                          jsii.String(id),
		Prefix:                      jsii.String(prefix),
		NoncurrentVersionExpiration: awscdk.Duration_Days(jsii.Number(days)),
		ExpiredObjectDeleteMarker:   jsii.Bool(true),
	}
}
