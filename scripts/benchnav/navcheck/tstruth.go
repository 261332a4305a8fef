package navcheck

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

//go:embed tstruth.js
var tsTruthScript []byte

// TSTruth asks the TypeScript language service (the typescript package at
// typescriptDir, run by node) for the definitions of a sample of the uses
// in the project at dir (its tsconfig.json), and for every reference to
// the symbols of the first s.Symbols of them; s.All takes every use and
// symbol. s.Names is not used: TypeScript's symbols are sampled from uses
// only. Uses defined only outside the project's non-test files (in lib
// or node_modules declarations) are left out.
func TSTruth(ctx context.Context, node, typescriptDir, dir string, s Sample) (*Truth, error) {
	script := filepath.Join(os.TempDir(), fmt.Sprintf("navcheck-tstruth-%d.js", os.Getpid()))
	if err := os.WriteFile(script, tsTruthScript, 0o600); err != nil {
		return nil, err
	}
	defer os.Remove(script)
	uses, symbols := s.Uses, s.Symbols
	if s.All {
		uses, symbols = 0, 0
	}
	cmd := exec.CommandContext(ctx, node, script, typescriptDir, dir, strconv.Itoa(uses), strconv.Itoa(symbols), strconv.FormatUint(s.Seed, 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("the TypeScript language service: %v: %s", err, stderr.Bytes())
	}
	var answer struct {
		Files   []string
		Uses    []Use
		Symbols []Symbol
		// Excluded counts the identifiers left out, by why.
		Excluded                  map[string]int
		DefinitionMs, ReferenceMs []float64
	}
	if err := json.Unmarshal(out, &answer); err != nil {
		return nil, fmt.Errorf("the TypeScript language service's answer: %w", err)
	}
	t := &Truth{Files: map[string]bool{}, Uses: answer.Uses, Symbols: answer.Symbols, Excluded: answer.Excluded}
	for _, f := range answer.Files {
		t.Files[f] = true
	}
	for _, ms := range answer.DefinitionMs {
		t.DefinitionTimes = append(t.DefinitionTimes, time.Duration(ms*float64(time.Millisecond)))
	}
	for _, ms := range answer.ReferenceMs {
		t.ReferenceTimes = append(t.ReferenceTimes, time.Duration(ms*float64(time.Millisecond)))
	}
	return t, nil
}
