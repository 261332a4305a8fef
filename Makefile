# Toolshed — every developer command. `make run` and `make test` are the two
# that matter; the rest build, deploy and measure.

SHELL := /bin/bash
GO ?= go
FUNCTIONS := $(notdir $(wildcard functions/*))
# Where make build puts the bootstraps.
BUILD ?= build
# The build's version, in every binary's -version and the MCP serverInfo:
# the tag (v1.2.0), or the tag, commits since and commit (v1.2.0-3-gabc1234),
# or the commit alone before any tag; -dirty with uncommitted changes.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
CDK := $(CURDIR)/node_modules/.bin/cdk
export CDK_DISABLE_VERSION_CHECK := 1
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1

.PHONY: run test test-go test-infra lint build arm64-cc qemu git-packages FORCE synth bootstrap deploy diff smoke bench bench-grep bench-mcp bench-lambda bench-scale bench-precise bench-nav bench-history check-history contextbench cost cost-measure fuzz clean ripgrep pytools help

## run: the local MCP server on http://127.0.0.1:8000 (every tool, embedded storage;
## flags in ARGS, e.g. ARGS="-repo ~/src/myapp"; ARGS=-h lists them)
run:
	$(GO) build -ldflags='-X main.version=$(VERSION)' -o build/local/toolshed ./functions/gateway
	exec ./build/local/toolshed $(ARGS)

## test: every test — Go unit, contract, MCP client, store conformance on both
## backends (dynalite), Lambda fixtures, CDK assertions — plus gofmt and vet.
## The three run side by side (each one's output printed when it ends): CDK
## synthesis waits on node and vet on the disk, so the cores stay busy.
test: node_modules ripgrep pytools arm64-cc qemu git-packages
	@$(MAKE) --no-print-directory -j3 --output-sync=target lint test-go test-infra

test-go: node_modules ripgrep pytools arm64-cc qemu git-packages
	$(GO) test -count=1 ./...

test-infra: node_modules pytools
	cd infra && $(GO) vet ./... && $(GO) test -count=1 ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# npm packages (dynalite for the DynamoDB tests, the CDK CLI) from the
# committed package-lock; reinstalled when the lock changes.
node_modules: package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch node_modules

# Python tools (moto_server, cfn-lint) at the versions in
# scripts/python-requirements.txt: used from PATH when there, otherwise
# installed into a virtualenv under build/pytools, which PATH lists first.
PYTOOLS := $(CURDIR)/build/pytools
export PATH := $(PYTOOLS)/bin:$(PATH)
pytools:
	@python3 -c 'import moto, sys; sys.exit(moto.__version__ != "5.2.1")' 2>/dev/null \
	  && cfn-lint --version 2>/dev/null | grep -qx 'cfn-lint 1.51.0' \
	  || { echo "installing moto and cfn-lint into $(PYTOOLS)"; python3 -m venv $(PYTOOLS) \
	       && $(PYTOOLS)/bin/pip install -q -r scripts/python-requirements.txt; }

# ripgrep (Debian package) for grep_codebase's parity test and
# bench-grep; installed when missing (apt-get, with sudo unless root).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
ripgrep:
	@command -v rg >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq ripgrep >/dev/null; }

## build: one linux/arm64 bootstrap per function for provided.al2023 (in
## $(BUILD)/<function>/bootstrap), and the git program's Lambda layer for
## the history tools ($(BUILD)/git-layer); see docs/deploy.md#symbols-and-cgo
build: $(FUNCTIONS:%=$(BUILD)/%/bootstrap) $(BUILD)/git-layer

# Bootstraps and cgo. Every bootstrap is one static binary. Those whose
# packages link C — tree-sitter, for find_symbols: the tool function and the
# gateway, which serves every tool locally — are built with cgo and Debian's
# cross-compiler (installed when missing), linked statically with Go's own
# DNS resolver and user lookup (netgo, osusergo); the others (authorizer,
# indexer) stay CGO_ENABLED=0. `go list` says which is which, so a new cgo
# dependency is built right without a change here.
ARM64_CC := aarch64-linux-gnu-gcc
STATIC_TAGS := netgo,osusergo,lambda.norpc
links_c = CGO_ENABLED=1 GOOS=linux GOARCH=arm64 $(GO) list -deps -tags $(STATIC_TAGS) \
	-f '{{if .CgoFiles}}{{.ImportPath}}{{end}}' ./functions/$(1) | grep -qvx runtime/cgo

$(BUILD)/%/bootstrap: FORCE
	@echo "$@"
	@if $(call links_c,$*); then \
	  $(MAKE) -s arm64-cc && \
	  GOOS=linux GOARCH=arm64 CGO_ENABLED=1 CC=$(ARM64_CC) $(GO) build -tags $(STATIC_TAGS) -trimpath \
	    -ldflags='$(LDFLAGS) -linkmode external -extldflags "-static"' -o $@ ./functions/$*; \
	else \
	  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath \
	    -ldflags='$(LDFLAGS)' -o $@ ./functions/$*; \
	fi

FORCE:

# The git program's Lambda layer (scripts/gitlayer: Debian's git and the two
# libraries it links, for arm64). The Lambda harness lays out one for the
# host itself (shared/testenv/deploytest), which make test needs Debian's
# package lists for.
$(BUILD)/git-layer: FORCE
	@$(MAKE) -s git-packages ARCH=arm64
	$(GO) run ./scripts/gitlayer -arch arm64 -o $@

# Lets apt-get download Debian's packages for ARCH (the host's unless
# set): the architecture added to dpkg and the package lists fetched when
# missing (with sudo unless root).
git-packages:
	@arch=$${ARCH:-$$(dpkg --print-architecture)}; \
	  { [ "$$arch" = "$$(dpkg --print-architecture)" ] || dpkg --print-foreign-architectures | grep -qx "$$arch" \
	    || $(SUDO) dpkg --add-architecture "$$arch"; } && \
	  { apt-cache show "git:$$arch" >/dev/null 2>&1 || $(SUDO) apt-get update -qq; }

# The arm64 cross-compiler, and qemu to run what it builds (make test starts
# the arm64 tool bootstrap under qemu-aarch64-static): Debian's packages,
# installed when missing (apt-get, with sudo unless root).
arm64-cc:
	@command -v $(ARM64_CC) >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq gcc-aarch64-linux-gnu >/dev/null; }

qemu:
	@command -v qemu-aarch64-static >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq qemu-user-static >/dev/null; }

## synth: CloudFormation template in infra/cdk.out (works offline);
## deployment options and settings go in ARGS as -c key=value (or in
## infra/cdk.json's "context"; see docs/deploy.md#deploy-to-aws)
synth: build node_modules
	cd infra && $(CDK) synth --quiet --no-notices $(ARGS)

## bootstrap: once per AWS account and region, before the first deploy
## (CDK's staging bucket and roles); needs AWS credentials
bootstrap: build node_modules
	cd infra && $(CDK) bootstrap --no-notices $(ARGS)

## diff / deploy: need AWS credentials
diff: build node_modules
	cd infra && $(CDK) diff --no-notices $(ARGS)

deploy: build node_modules
	cd infra && $(CDK) deploy --no-notices --require-approval broadening $(ARGS)

## smoke: call each tool's first contract example on the three routes of a
## running server and check the answers (URL=http://127.0.0.1:8000; a key in TOOLSHED_KEY)
URL ?= http://127.0.0.1:8000
smoke:
	$(GO) run ./scripts/smoke -url $(URL)

## bench: latency and throughput benchmarks (figures: docs/benchmarks.md)
bench: node_modules
	$(GO) test -run '^$$' -bench . -benchtime 2s ./shared/localserver/ ./shared/tools/tasks/ ./shared/tools/webfetch/ ./shared/tools/fileio/ ./shared/textsearch/
	$(GO) test -run '^$$' -bench BenchmarkSearch20k -benchtime 200x ./shared/contextindex/
	$(GO) test -run '^$$' -bench BenchmarkBuildGoTree -benchtime 3x ./shared/contextindex/

## contextbench: context_search on questions generated from the Go tree's and
## Python's doc comments (held-out half; ARGS=-tuning for the tuning half) and
## on hand-written ones, next to a keyword baseline: recall@1/5/10, MRR@10 and
## nDCG@10 per class; index build time, size, memory and query latency
## (hybrid too with an embedder set; ARGS=-v for every question)
contextbench:
	$(GO) run ./scripts/contextbench $(ARGS)

## bench-mcp: Toolshed's local server next to a bare go-sdk server under the
## same wrk load, in one run: latency, throughput, idle RSS and the memory a
## load of 32 and 256 connections adds; prints the ratios and checks the targets
bench-mcp:
	@command -v wrk >/dev/null || apt-get install -y wrk >/dev/null || { echo "install wrk (apt-get install wrk)"; exit 1; }
	$(GO) run ./scripts/benchmcp

## bench-lambda: init time and peak RSS of each function's bootstrap (gateway,
## authorizer, every tool) run as a real process under a local Lambda Runtime API
bench-lambda: node_modules
	$(GO) test -run '^$$' -bench BenchmarkColdStart -benchtime 5x ./shared/lambdaentry/

## bench-grep: grep_codebase next to ripgrep on the Go source tree: through
## /v1 on the local server (make run's path; target ≤ 0.5x rg, its peak RSS)
## and in process over held snapshots (the tree and a 5k-file subset): every
## query class, p50s, ratio, match counts; read_file's p50, the S3 open time
bench-grep: ripgrep
	$(GO) run ./scripts/benchgrep

## bench-scale: repositories of 1k, 10k, 30k and 100k files of real code
## (Go tree, module cache, Python's library) on the local server (index
## files/s, RSS ready/after/peak, idle CPU, grep next to rg, context_search
## p50/p99) and through the Lambda harness (push, indexer, cold and warm
## calls against memory and deadline); quick: ARGS="-sizes 1k,10k -harness=false"
bench-scale: node_modules ripgrep pytools
	$(GO) run ./scripts/benchscale $(ARGS)

## bench-fanout: a git checkout (TREE, e.g. five copies of the Go tree side
## by side) published as a snapshot and indexed through the fan-out under the
## Lambda harness (10 index workers at their vCPU share, the Titan V2 stand-in
## under the default quota), then cold and warm calls through the HTTP API,
## the authorizer and the gateway (grep, context_search, read_file,
## find_symbols, find_references) against each deadline and memory
bench-fanout: node_modules pytools
	@test -n "$(TREE)" || { echo "usage: make bench-fanout TREE=/path/to/git/checkout"; exit 2; }
	TOOLSHED_SCALE_TREE=$(TREE) $(GO) test -count=1 -run TestScale -v -timeout 90m ./shared/lambdaentry/

## bench-precise: a git checkout (TREE) pushed with its precise index by
## scripts/snapshot push (or SCIP=FILE, one SCIP file made before, pushed
## with -scip), each SCIP file converted by an index worker bootstrap under
## the Lambda harness (time and peak RSS against its memory), then
## find_definition, find_references and find_callers in their functions'
## bootstraps, cold and warm, against their deadlines and memory
bench-precise: node_modules pytools
	@test -n "$(TREE)" || { echo "usage: make bench-precise TREE=/path/to/git/checkout [SCIP=file.scip]"; exit 2; }
	TOOLSHED_PRECISE_SCALE_TREE=$(TREE) TOOLSHED_PRECISE_SCALE_SCIP=$(SCIP) $(GO) test -count=1 -run TestPreciseScale -v -timeout 60m ./shared/lambdaentry/

## bench-nav: the navigation tools (list_files, find_symbols, find_references,
## read_file slices) on the Go source tree through /v1 on the local server,
## p50/p99 and answer bytes, next to rg --files -g and rg -w in the same run;
## then the precise rows: the tree's precise index (time, peak memory, size;
## five copies with ARGS=-five), its answers against go/types' and rxjs's
## against the TypeScript language service (precision, recall, definitions,
## p50), and 20 ambiguous names' textual and precise answers side by side;
## ARGS=-rxjs-only runs the rxjs comparison alone
bench-nav: ripgrep
	$(GO) run ./scripts/benchnav $(ARGS)

## cost: the monthly AWS bill of two team profiles, per service, with what
## grows with calls, pushes and repository size, next to one always-on
## container (docs/cost.md); your own profile in ARGS (-agents, -calls,
## -mix, -pushes, -files, -mb, -changed, -hours, -cold, -region; -prices
## lists the prices and their sources)
cost:
	$(GO) run ./scripts/cost $(ARGS)

## cost-measure: re-measure scripts/cost/measured.json, what cost reads,
## under the Lambda harness (an index build and a push through the fan-out,
## each tool's function cold and warm, the S3, SQS and DynamoDB requests
## counted); TREE=folder to measure another tree than a few Go packages
cost-measure: node_modules pytools
	TOOLSHED_COST_MEASURE=$(CURDIR)/scripts/cost/measured.json TOOLSHED_COST_TREE=$(TREE) \
	  $(GO) test -count=1 -run TestCostMeasure -v -timeout 30m ./shared/lambdaentry/

## check-history: the history tools (list_commits, get_commit, compare, blame,
## read_file's ref) next to git log, git show, git diff, git blame --porcelain
## and git show REV:PATH on a real history: REPO is a git working tree with
## thousands of commits (ARGS="-samples 100"; ARGS=-harness: pushed with its
## history to the Lambda harness, through the deployed functions)
check-history: pytools git-packages
	@test -n "$(REPO)" || { echo "usage: make check-history REPO=/path/to/git/checkout"; exit 2; }
	$(GO) run ./scripts/historycheck -repo $(REPO) $(ARGS)

## bench-history: log of a path, blame of a 500-line file (color.c: REPO is a
## checkout of git.git), get_commit and compare across 100 commits, p50 of
## each tool next to the git program doing the same, in one run; read_file and
## grep_codebase at a ref (each run at another commit); ARGS=-harness: through
## the Lambda harness and the gateway
bench-history: pytools git-packages
	@test -n "$(REPO)" || { echo "usage: make bench-history REPO=/path/to/git.git/checkout"; exit 2; }
	$(GO) run ./scripts/historycheck -repo $(REPO) -bench $(ARGS)

## fuzz: run each fuzz target for FUZZTIME (default 30s)
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzPrepareInput -fuzztime $(FUZZTIME) ./shared/schema/
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME) ./shared/schema/
	$(GO) test -run '^$$' -fuzz FuzzDuplicateKey -fuzztime $(FUZZTIME) ./shared/schema/
	$(GO) test -run '^$$' -fuzz FuzzFoldedKeys -fuzztime $(FUZZTIME) ./shared/schema/
	$(GO) test -run '^$$' -fuzz FuzzV1Body -fuzztime $(FUZZTIME) ./shared/httpapi/
	$(GO) test -run '^$$' -fuzz FuzzEncodedLen -fuzztime $(FUZZTIME) ./shared/httpapi/
	$(GO) test -run '^$$' -fuzz FuzzRefusalAnswer -fuzztime $(FUZZTIME) ./shared/httpapi/
	$(GO) test -run '^$$' -fuzz FuzzParseMessage -fuzztime $(FUZZTIME) ./shared/mcpserver/
	$(GO) test -run '^$$' -fuzz FuzzCheckRev -fuzztime $(FUZZTIME) ./shared/githistory/
	$(GO) test -run '^$$' -fuzz FuzzTokens -fuzztime $(FUZZTIME) ./shared/contextindex/
	$(GO) test -run '^$$' -fuzz FuzzUnmarshalVectors -fuzztime $(FUZZTIME) ./shared/contextindex/
	$(GO) test -run '^$$' -fuzz FuzzSplit -fuzztime $(FUZZTIME) ./shared/codechunk/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./shared/symbols/
	$(GO) test -run '^$$' -fuzz FuzzCheckURL -fuzztime $(FUZZTIME) ./shared/tools/webfetch/
	$(GO) test -run '^$$' -fuzz FuzzParseIPv4 -fuzztime $(FUZZTIME) ./shared/netguard/
	$(GO) test -run '^$$' -fuzz FuzzResolve -fuzztime $(FUZZTIME) ./shared/sandboxpath/
	$(GO) test -run '^$$' -fuzz FuzzClean -fuzztime $(FUZZTIME) ./shared/pathpolicy/
	$(GO) test -run '^$$' -fuzz FuzzMatch -fuzztime $(FUZZTIME) ./shared/pathmatch/
	$(GO) test -run '^$$' -fuzz FuzzPolicyCheck -fuzztime $(FUZZTIME) ./shared/repo/
	$(GO) test -run '^$$' -fuzz FuzzSearch -fuzztime $(FUZZTIME) ./shared/textsearch/
	$(GO) test -run '^$$' -fuzz FuzzTenant -fuzztime $(FUZZTIME) ./shared/tenant/
	$(GO) test -run '^$$' -fuzz FuzzAuthorization -fuzztime $(FUZZTIME) ./shared/oauth/

## clean: build output only; .toolshed (your local data) is kept
clean:
	rm -rf build infra/cdk.out

## help: this list (from the "## target: what it does" comment of each target)
help:
	@awk '/^## / { sub(/^## /, ""); if (cont) printf "  %-14s %s\n", "", $$0; \
	  else { i = index($$0, ": "); printf "  %-14s %s\n", substr($$0, 1, i - 1), substr($$0, i + 2) } \
	  cont = 1; next } { cont = 0 }' $(MAKEFILE_LIST)
