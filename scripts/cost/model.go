package main

import (
	"math"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/toolset"
)

// daysPerMonth is AWS's month: 730 hours.
const daysPerMonth = 730.0 / 24

// Derived, not measured here (docs/cost.md says why):
const (
	// gatewayOverheadMs is what the gateway's invocation adds to the tool
	// function's: decoding the JSON-RPC request and one Invoke.
	gatewayOverheadMs = 15
	// platformLogBytes are the START, END and REPORT lines Lambda writes
	// for every invocation (the harness writes none).
	platformLogBytes = 350
	// snapshotPartMB: scripts/snapshot uploads a zip in 8 MiB parts.
	snapshotPartMB = 8
)

// Profile is a team's use of one deployment.
type Profile struct {
	Name              string
	Agents            int
	CallsPerAgentDay  float64
	Mix               map[string]float64 // share of calls per tool (normalized)
	PushesPerDay      float64
	Files             int     // the repository's files
	MB                float64 // and their size
	ChangedFiles      int     // files a push changes (their chunks are embedded)
	ActiveHoursPerDay float64 // hours a day each agent calls (the authorizer's cache)
	ColdShare         float64 // invocations that start an environment
}

// driver is what a cost line grows with.
type driver string

const (
	perCall  driver = "calls"
	perPush  driver = "pushes"
	perSize  driver = "repository"
	perMonth driver = "fixed"
)

// line is one priced quantity of a month.
type line struct {
	Service, Item string
	Quantity      float64
	Price         price
	Driver        driver
}

func (l line) USD() float64 { return l.Quantity * l.Price.USD }

// bill is a profile's month.
type bill struct {
	Profile       Profile
	Calls, Pushes float64
	Lines         []line
	Container     container
}

// model holds the inputs that do not change with the profile.
type model struct {
	M      deploy.Measured
	Memory map[string]int // each tool function's memory (its family's)
}

func newModel(m deploy.Measured) model {
	mem := map[string]int{}
	for _, f := range toolset.Families {
		for _, t := range f.Tools {
			mem[t] = f.Memory()
		}
	}
	return model{M: m, Memory: mem}
}

// gbs is GB-seconds of ms milliseconds at mb megabytes.
func gbs(ms float64, mb int) float64 { return ms / 1000 * float64(mb) / 1024 }

// lambdaGBs is the GB-second price of deploy.Architecture.
func lambdaGBs() price {
	if deploy.Architecture == "x86_64" {
		return lambdaX86GBs
	}
	return lambdaArmGBs
}

// compute prices p's month.
func (md model) compute(p Profile) bill {
	b := bill{Profile: p, Calls: float64(p.Agents) * p.CallsPerAgentDay * daysPerMonth, Pushes: p.PushesPerDay * daysPerMonth}
	b.Lines = append(b.Lines, md.callLines(p, b.Calls)...)
	b.Lines = append(b.Lines, md.authorizerLines(p)...)
	b.Lines = append(b.Lines, md.pushLines(p, b.Pushes)...)
	b.Lines = append(b.Lines, md.fixedLines(p)...)
	b.Container = sizeContainer(p.MB)
	return b
}

// sizeRatio is how much larger the profile's repository is than the tree
// measured.
func (md model) sizeRatio(p Profile) float64 { return float64(p.Files) / float64(md.M.Build.Files) }

// callLines are the costs of the calls: each an HTTP API request to /mcp,
// a gateway invocation that waits for the tool function's, and the tool
// function's own reads and writes.
func (md model) callLines(p Profile, calls float64) []line {
	var toolGBs, gatewayGBs, reads, writes, gets, puts, logBytes, tokens float64
	for tool, share := range p.Mix {
		f, ok := md.M.Tools[tool]
		if !ok {
			continue
		}
		n := calls * share
		warm, load := f.WarmMs, max(f.ColdMs-f.WarmMs, 0)
		if fam, ok := family.Of(toolset.Families, tool); ok && fam.ReadsRepositories {
			load *= md.sizeRatio(p) // a cold call reads the snapshot
			if tool == "grep_codebase" {
				warm *= md.sizeRatio(p) // a search reads every file
			}
		}
		mem := md.Memory[tool]
		toolGBs += n*gbs(warm, mem) + n*p.ColdShare*gbs(f.InitMs+load, mem)
		gatewayGBs += n * gbs(warm+gatewayOverheadMs, deploy.GatewayMemoryMB)
		reads, writes = reads+n*f.DynamoReads, writes+n*f.DynamoWrites
		gets, puts = gets+n*f.S3Gets, puts+n*f.S3Puts
		logBytes += n * float64(f.LogBytes+2*platformLogBytes)
		tokens += n * f.EmbedTokens
	}
	return append([]line{
		{"Lambda", "tool functions", toolGBs, lambdaGBs(), perCall},
		{"Lambda", "gateway (waits for the tool)", gatewayGBs, lambdaGBs(), perCall},
		{"Lambda", "requests (gateway and tool)", 2 * calls, lambdaRequest, perCall},
		{"API Gateway", "requests to /mcp", calls, httpAPIRequest, perCall},
		{"DynamoDB", "reads (rate counter, tasks)", reads, dynamoRead, perCall},
		{"DynamoDB", "writes (rate counter, tasks)", writes, dynamoWrite, perCall},
		{"S3", "GETs (snapshots, indexes)", gets, s3Get, perCall},
		{"S3", "PUTs", puts, s3Put, perCall},
		{"Bedrock", "context_search queries (tokens)", tokens, titanToken, perCall},
	}, logLines("calls", logBytes, perCall)...)
}

// logLines are the ingestion and storage of bytes of logs a month (of
// whose: the calls', the authorizer's, the builds').
func logLines(whose string, bytes float64, d driver) []line {
	gb := bytes / (1 << 30)
	return []line{
		{"CloudWatch", "logs ingested, " + whose + " (GB)", gb, logsIngested, d},
		{"CloudWatch", "logs stored, " + whose + " (GB-month)", gb * deploy.LogRetentionDays / daysPerMonth, logsStored, d},
	}
}

// authorizerLines: API Gateway caches the authorizer's answer per key for
// auth.AuthorizerCacheTTL, so an agent calling steadily costs at most one
// authorizer invocation per TTL while it works.
func (md model) authorizerLines(p Profile) []line {
	perDay := math.Min(p.CallsPerAgentDay, p.ActiveHoursPerDay*3600/auth.AuthorizerCacheTTL.Seconds())
	n := float64(p.Agents) * perDay * daysPerMonth
	a := md.M.Authorizer
	return append([]line{
		{"Lambda", "authorizer", n*gbs(a.WarmMs, deploy.AuthorizerMemoryMB) + n*p.ColdShare*gbs(a.InitMs, deploy.AuthorizerMemoryMB), lambdaGBs(), perCall},
		{"Lambda", "authorizer requests", n, lambdaRequest, perCall},
		{"DynamoDB", "authorizer reads (API keys)", n * a.DynamoReads, dynamoRead, perCall},
	}, logLines("authorizer", n*float64(a.LogBytes+platformLogBytes), perCall)...)
}

// tokensPerFile are the Bedrock input tokens a file's chunks take (the
// first build embeds every chunk).
func (md model) tokensPerFile() float64 {
	return float64(md.M.FirstBuild.EmbedTokens) / float64(md.M.FirstBuild.Files)
}

// firstBuildUSD is the Bedrock tokens of embedding the whole repository
// once, when it is first pushed.
func (md model) firstBuildUSD(p Profile) float64 {
	return float64(p.Files) * md.tokensPerFile() * titanToken.USD
}

// pushLines are the index builds: each push rebuilds the lexical index
// (the measured build scaled by files) and embeds the chunks of the files
// it changed (the others' vectors are reused by text).
func (md model) pushLines(p Profile, pushes float64) []line {
	b, r := md.M.Build, md.sizeRatio(p)
	workers := math.Max(1, math.Ceil(float64(b.SQSSends)*r))
	uploadParts := math.Ceil(p.MB/snapshotPartMB) + 2 // the parts, the pointer, the record
	return append([]line{
		{"Lambda", "indexer and index workers", pushes * (gbs(b.IndexerMs*r, deploy.IndexerMemoryMB) + gbs(b.WorkerMs*r, deploy.IndexWorkerMemoryMB)), lambdaGBs(), perPush},
		{"Lambda", "indexer and worker requests", pushes * (1 + workers), lambdaRequest, perPush},
		{"S3", "index build GETs", pushes * float64(b.S3Gets) * r, s3Get, perPush},
		{"S3", "index build and upload PUTs", pushes * (float64(b.S3Puts)*r + uploadParts), s3Put, perPush},
		{"SQS", "index queue requests", pushes * float64(b.SQSRequests) * r, sqsRequest, perPush},
		{"Bedrock", "changed files embedded (tokens)", pushes * float64(p.ChangedFiles) * md.tokensPerFile(), titanToken, perPush},
	}, logLines("index builds", pushes*(float64(b.LogBytes)*r+platformLogBytes*(1+workers)), perPush)...)
}

// fixedLines grow with neither calls nor pushes: what is stored, the
// alarms, the metrics and the secret.
func (md model) fixedLines(p Profile) []line {
	days, _ := deploy.SnapshotRetentionOption.Get(func(string) string { return "" }) // the default
	kept := math.Min(p.PushesPerDay*float64(days), p.PushesPerDay*daysPerMonth)
	snapshotsGB := (1 + kept) * p.MB / 1024 // each push uploads the tree (zipped: less)
	indexGB := float64(md.M.FirstBuild.S3PutBytes) * md.sizeRatio(p) / (1 << 30)
	tools, functions := len(toolset.Tools()), len(deploy.Functions(toolset.Families))
	return []line{
		{"S3", "snapshots kept (GB-month)", snapshotsGB, s3Storage, perSize},
		{"S3", "code index, vectors included (GB-month)", indexGB, s3Storage, perSize},
		{"CloudWatch", "alarm metrics", float64(deploy.AlarmMetrics(functions+4, tools, len(dynamostore.Schemas))), alarmMetric, perMonth},
		{"CloudWatch", "custom metrics (EMF)", float64(md.metrics(p)), customMetric, perMonth},
		{"Secrets Manager", "the cursor key", 1, secret, perMonth},
		{"Secrets Manager", "reads (one per cold start)", p.ColdShare * float64(p.Agents) * p.CallsPerAgentDay * daysPerMonth, secretCall, perMonth},
	}
}

// container is one always-on Fargate task that serves the same load as the
// local server does (make run): sized for its resident memory.
type container struct {
	VCPU, GB, RSSMB float64
}

// The local server's peak resident memory grows with the repository:
// 510 MB on the Go tree (156 MB, docs/repositories.md) and 1.1 GB on five
// copies of it (780 MB, docs/benchmarks.md); a line through the two.
const (
	rssBaseMB  = 362
	rssPerMB   = 0.95
	rssHeadway = 1.25 // headroom above the peak
)

func sizeContainer(repoMB float64) container {
	rss := rssBaseMB + rssPerMB*repoMB
	gb := math.Max(2, math.Ceil(rss*rssHeadway/1024)) // Fargate's least memory at 1 vCPU is 2 GB
	vcpu := 1.0
	if gb > 8 {
		vcpu = 2
	}
	return container{VCPU: vcpu, GB: gb, RSSMB: rss}
}

// USD is its month, always on.
func (c container) USD() float64 {
	return 730 * (c.VCPU*fargateArmVCPU.USD + c.GB*fargateArmGB.USD)
}

// metrics are the custom metrics a month writes: those of each tool the
// profile calls, and the index builds'.
func (md model) metrics(p Profile) int {
	n := md.M.FirstBuild.Metrics
	for tool, share := range p.Mix {
		if share > 0 {
			n += md.M.Tools[tool].Metrics
		}
	}
	return n
}
