package main

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/toolshed/toolshed/shared/deploy"
)

// measuredJSON is written by `make cost-measure` (TestCostMeasure in
// shared/lambdaentry): the harness's figures for one tree.
//
//go:embed measured.json
var measuredJSON []byte

func loadMeasured(data []byte) (deploy.Measured, error) {
	var m deploy.Measured
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("read measured.json: %w", err)
	}
	if m.Build.Files == 0 || m.FirstBuild.EmbedTokens == 0 || len(m.Tools) == 0 {
		return m, fmt.Errorf("measured.json has no build or no tools: run make cost-measure")
	}
	return m, nil
}
