// Command cost computes the monthly AWS bill of a Toolshed deployment for
// a team's profile (agents, calls, tool mix, pushes, repository size):
// per service, the total, what grows with calls, pushes and repository
// size, and the same load on one always-on container. Its inputs are the
// deployment's settings as the CDK app reads them (shared/deploy, each
// family's memory, auth.AuthorizerCacheTTL), the harness's measurements
// (measured.json, written by `make cost-measure`) and AWS's prices for
// us-east-1 (prices.go, each with its page and the day it was read).
// docs/cost.md explains the model.
//
//	go run ./scripts/cost                      # the two team profiles
//	go run ./scripts/cost -agents 12 -calls 800 -pushes 4 -files 3000 -mb 40
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// goTree is the Go source tree the profiles are sized on (docs/benchmarks.md:
// 11,446 files in a git copy; docs/repositories.md: 156 MB).
const (
	goTreeFiles = 11446
	goTreeMB    = 156
)

// defaultMix is the share of calls per tool an agent exploring code makes.
const defaultMix = "read_file=0.35,grep_codebase=0.25,context_search=0.15,list_files=0.1,find_symbols=0.1,add_task=0.025,list_tasks=0.025"

// teamProfiles are the profiles printed without flags.
func teamProfiles(mix map[string]float64) []Profile {
	base := Profile{Mix: mix, PushesPerDay: 20, ChangedFiles: 10, ActiveHoursPerDay: 8, ColdShare: 0.01}
	a, b := base, base
	a.Name, a.Agents, a.CallsPerAgentDay, a.Files, a.MB = "(a) 5 agents, the Go tree", 5, 2000, goTreeFiles, goTreeMB
	b.Name, b.Agents, b.CallsPerAgentDay, b.Files, b.MB = "(b) 50 agents, five times the Go tree", 50, 2000, 5*goTreeFiles, 5*goTreeMB
	return []Profile{a, b}
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cost:", err)
		os.Exit(2)
	}
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("cost", flag.ContinueOnError)
	p := Profile{Name: "yours"}
	fs.IntVar(&p.Agents, "agents", 0, "agents (0: print the team profiles)")
	fs.Float64Var(&p.CallsPerAgentDay, "calls", 2000, "calls per agent a day")
	mix := fs.String("mix", defaultMix, "share of calls per tool, tool=share,...")
	fs.Float64Var(&p.PushesPerDay, "pushes", 20, "pushes a day")
	fs.IntVar(&p.Files, "files", goTreeFiles, "the repository's files")
	fs.Float64Var(&p.MB, "mb", goTreeMB, "the repository's size in MB")
	fs.IntVar(&p.ChangedFiles, "changed", 10, "files a push changes")
	fs.Float64Var(&p.ActiveHoursPerDay, "hours", 8, "hours a day the agents work")
	fs.Float64Var(&p.ColdShare, "cold", 0.01, "share of invocations that start an environment")
	reg := fs.String("region", region, "the region (only "+region+" is priced)")
	showPrices := fs.Bool("prices", false, "list the prices and their sources")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *reg != region {
		return fmt.Errorf("no prices for %s: prices.go has %s's", *reg, region)
	}
	shares, err := parseMix(*mix)
	if err != nil {
		return err
	}
	p.Mix = shares
	m, err := loadMeasured(measuredJSON)
	if err != nil {
		return err
	}
	for tool := range shares {
		if _, ok := m.Tools[tool]; !ok {
			return fmt.Errorf("-mix: %s has no measured figures (measured.json)", tool)
		}
	}
	md := newModel(m)
	if *showPrices {
		printPrices(w)
		return nil
	}
	fmt.Fprintf(w, "Measured %s on %s (%s); prices for %s read %s.\n", m.Date, m.Tree, m.Command, region, read)
	profiles := teamProfiles(shares)
	if p.Agents > 0 {
		profiles = []Profile{p}
	}
	for _, p := range profiles {
		printBill(w, md, md.compute(p))
	}
	return nil
}

// parseMix reads tool=share pairs and scales the shares to sum to 1.
func parseMix(s string) (map[string]float64, error) {
	out, sum := map[string]float64{}, 0.0
	for _, pair := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		share, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || share < 0 {
			return nil, fmt.Errorf("-mix: %q is not tool=share", pair)
		}
		out[name] += share
		sum += share
	}
	if sum <= 0 {
		return nil, fmt.Errorf("-mix: the shares sum to 0")
	}
	for k := range out {
		out[k] /= sum
	}
	return out, nil
}
