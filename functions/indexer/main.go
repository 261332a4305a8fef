// Command indexer is the Lambda that keeps context_search's indexes: it
// indexes published repository snapshots (S3 events) and embeds new memory
// entries (the Memory table's stream). See shared/indexer.
package main

import "github.com/toolshed/toolshed/shared/indexer"

// The snapshot reader comes from the repository package (shared/repo);
// until it is wired here, snapshot events fail and are retried by Lambda,
// while memory entries are indexed.
func main() { indexer.Start(nil) }
