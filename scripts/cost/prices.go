package main

// price is one AWS price for us-east-1, with the public page it was read
// from (through the search tool's stored copy) and the day it was read.
type price struct {
	USD    float64 // per Unit
	Unit   string
	Source string // the page; "not found: …" when no page gave it
	Read   string // the day it was read
}

// read is the day the prices below were read.
const read = "2026-12-02"

// region is the one region the prices are for.
const region = "us-east-1"

// The prices the model uses (on-demand, before any free tier).
var (
	lambdaArmGBs   = price{0.0000133334, "GB-second (arm64)", "https://git.mcrn.ar/mariano/lambda_local_runner/src/commit/957e45b8adae23ce50b966346229585b5df18b4d/docs/lambdas-md/lambda-13-cost.md; https://cloudchipr.com/blog/aws-lambda-pricing (us-east-1)", read}
	lambdaX86GBs   = price{0.0000166667, "GB-second (x86_64)", "same pages", read}
	lambdaRequest  = price{0.20 / 1e6, "request", "same pages; init is billed: https://web.archive.org/web/20260618003751/https://aws.amazon.com/lambda/pricing/", read}
	httpAPIRequest = price{1.00 / 1e6, "HTTP API request (first 300 M a month, 512 KB each)", "https://docs.aws.amazon.com/whitepapers/latest/best-practices-api-gateway-private-apis-integration/cost-optimization.html", read}
	dynamoWrite    = price{0.625 / 1e6, "write request unit (on-demand)", "https://airbyte.com/data-engineering-resources/dynamodb-pricing", read}
	dynamoRead     = price{0.125 / 1e6, "read request unit (on-demand)", "https://airbyte.com/data-engineering-resources/dynamodb-pricing", read}
	s3Put          = price{0.005 / 1000, "PUT, COPY, POST or LIST request (S3 Standard)", "https://devnotes.tech/understanding-aws-s3-pricing-a-complete-cost-breakdown-with-examples", read}
	s3Get          = price{0.0004 / 1000, "GET request (S3 Standard)", "https://devnotes.tech/understanding-aws-s3-pricing-a-complete-cost-breakdown-with-examples", read}
	s3Storage      = price{0.023, "GB-month (S3 Standard, first 50 TB)", "https://devnotes.tech/understanding-aws-s3-pricing-a-complete-cost-breakdown-with-examples", read}
	sqsRequest     = price{0.40 / 1e6, "request (standard queue, 64 KB each)", "https://www.factualminds.com/blog/amazon-sqs-pricing-64kb-rule-fifo-vs-standard/; https://cloudburn.io/blog/amazon-sqs-pricing", read}
	titanToken     = price{0.00002 / 1000, "input token (Titan Text Embeddings V2, on demand)", "https://openrouter.ai/amazon/titan-embed-text-v2/providers ($0.02 per million, Bedrock's price)", read}
	logsIngested   = price{0.50, "GB of logs ingested (standard class)", "https://www.factualminds.com/blog/amazon-cloudwatch-pricing-metrics-logs-alarms-dashboards/", read}
	logsStored     = price{0.03, "GB-month of logs stored", "not found: no page the search returned gave it; the value commonly quoted", read}
	customMetric   = price{0.30, "custom metric a month (first 10,000)", "https://signoz.io/guides/cloudwatch-pricing", read}
	alarmMetric    = price{0.10, "alarm metric a month (standard resolution)", "not found: aws.amazon.com/cloudwatch/pricing's stored copy shows only the free tier (10 alarm metrics); the value commonly quoted", read}
	secret         = price{0.40, "secret a month", "https://hivebook.wiki/wiki/aws-secrets-manager-rotated-secrets-dynamic-db-credentials-kms", read}
	secretCall     = price{0.05 / 10000, "API call", "https://hivebook.wiki/wiki/aws-secrets-manager-rotated-secrets-dynamic-db-credentials-kms", read}
	fargateArmVCPU = price{0.03238, "vCPU-hour (Fargate Linux/ARM)", "https://www.vantage.sh/blog/fargate-pricing", read}
	fargateArmGB   = price{0.00356, "GB-hour (Fargate Linux/ARM)", "https://www.vantage.sh/blog/fargate-pricing", read}
)

// prices lists them for -prices and the docs.
var prices = []price{lambdaArmGBs, lambdaX86GBs, lambdaRequest, httpAPIRequest, dynamoWrite, dynamoRead, s3Put, s3Get,
	s3Storage, sqsRequest, titanToken, logsIngested, logsStored, customMetric, alarmMetric, secret, secretCall,
	fargateArmVCPU, fargateArmGB}
