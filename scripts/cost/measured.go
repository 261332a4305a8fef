package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// measuredJSON is written by `make cost-measure` (TestCostMeasure in
// shared/lambdaentry): the harness's figures for one tree.
//
//go:embed measured.json
var measuredJSON []byte

// measured is what the harness measured (see TestCostMeasure).
type measured struct {
	Date, Tree, Commit, Command string
	FirstBuild, Build           buildFigures // the first, and a push of the same files
	Tools                       map[string]toolFigures
	Authorizer                  toolFigures
}

// buildFigures are one index build of the tree, start to fully embedded.
type buildFigures struct {
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

// toolFigures are one function's calls: the averages of the warm ones.
type toolFigures struct {
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

func loadMeasured(data []byte) (measured, error) {
	var m measured
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("read measured.json: %w", err)
	}
	if m.Build.Files == 0 || m.FirstBuild.EmbedTokens == 0 || len(m.Tools) == 0 {
		return m, fmt.Errorf("measured.json has no build or no tools: run make cost-measure")
	}
	return m, nil
}
