// Command indexer is the Lambda that keeps context_search's indexes: it
// indexes published repository snapshots (S3 events) and embeds new memory
// entries (the Memory table's stream). See shared/indexer.
package main

import "github.com/toolshed/toolshed/shared/lambdaentry"

func main() { lambdaentry.StartIndexer() }
