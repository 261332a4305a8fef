package deploy

// Measured is what the Lambda harness measured of a deployment's work on
// one tree (TestCostMeasure in shared/lambdaentry writes it as
// scripts/cost/measured.json; scripts/cost reads it).
type Measured struct {
	Date, Tree, Commit, Command string
	FirstBuild, Build           BuildFigures // the first, and a push of the same files
	Tools                       map[string]ToolFigures
	Authorizer                  ToolFigures
}

// BuildFigures are one index build of the tree, start to fully embedded.
type BuildFigures struct {
	Files, Chunks, Parts       int
	Bytes                      int64
	IndexerMs, WorkerMs        float64
	S3Gets, S3Puts             int64
	S3GetBytes, S3PutBytes     int64
	SQSRequests, SQSSends      int64
	EmbedRequests, EmbedTokens int
	LogBytes                   int
	Metrics                    int // custom metrics the build writes (EMF)
}

// ToolFigures are one function's calls: the averages of the warm ones.
type ToolFigures struct {
	MemoryMB                    int
	InitMs, ColdMs, WarmMs      float64
	RequestBytes, ResponseBytes int
	LogBytes                    int
	DynamoReads, DynamoWrites   float64
	S3Gets, S3Puts              float64
	S3GetBytes                  float64
	EmbedTokens                 float64
	Metrics                     int // custom metrics its calls write (EMF)
}
