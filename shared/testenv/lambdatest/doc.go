// Package lambdatest runs Lambda function bootstraps as real processes on
// the host, against a local stand-in for the parts of the Lambda service
// they talk to, so tests exercise the same binary, runtime client and
// environment a deployment does.
//
//	fn, err := lambdatest.Start(lambdatest.Config{Name: "hello", Bootstrap: bin, Env: env})
//	defer fn.Stop()
//	resp, err := fn.Invoke(ctx, []byte(`{"tool":"hello",...}`))
//	// resp.Payload, resp.FunctionError ("" or "Unhandled"), resp.ErrorType
//
// It has these parts:
//
//   - Runtime serves the Runtime API (version 2018-06-01) a bootstrap polls
//     through AWS_LAMBDA_RUNTIME_API: GET /runtime/invocation/next with the
//     Lambda-Runtime-Aws-Request-Id, -Deadline-Ms, -Invoked-Function-Arn
//     and -Trace-Id headers; POST /runtime/invocation/{id}/response and
//     /error; POST /runtime/init/error. One invocation at a time, with the
//     function's deadline, Lambda's 6 MB response limit and the error
//     documents Lambda itself returns (Runtime.ExitError, Sandbox.Timedout,
//     Function.ResponseSizeTooLarge).
//   - Function starts a bootstrap with the variables Lambda defines
//     (function name, region, dummy credentials, ...) plus its own, wired
//     to a Runtime, holds it to its memory, CPU share and init limit,
//     freezes it between invocations, and measures its init time and peak
//     RSS. Its layers (Config.Layers, folders) are given to it as Lambda
//     gives those it extracts into /opt: each one's bin on PATH, its lib
//     on LD_LIBRARY_PATH. One divergence: Lambda puts /opt/bin last on
//     PATH, the harness puts the layers' bin first, because this machine
//     has programs in /usr/bin that AL2023 has not (git), and the
//     program a function runs must be its layer's, as deployed. Each
//     function has a /tmp of its own, as each Lambda execution environment
//     does: a folder the harness makes and removes, named by TMPDIR (which
//     Lambda leaves unset: there os.TempDir is /tmp).
//   - Service serves the Invoke API (POST /2015-03-31/functions/{name}/
//     invocations) for a set of Functions, so code that calls Lambda with
//     the AWS SDK reaches them through AWS_ENDPOINT_URL_LAMBDA.
//   - HTTPAPI stands in for an API Gateway HTTP API: HTTP requests become
//     payload format 2.0 events for the Function of their route, after its
//     Lambda authorizer, and the functions' responses become the answers.
//   - Pool runs a function as Lambda scales it: up to a number of
//     execution environments, started as invocations need them, an
//     environment whose process ended replaced by a new one.
//   - SQSSource stands in for an SQS event source mapping: it receives
//     messages from a queue (moto_server's), invokes a Pool or Function
//     with them as SQS events, and deletes what succeeded; the rest comes
//     back after the queue's visibility timeout and ends in its
//     dead-letter queue.
//
// A Function is one execution environment: one that crashed, was killed
// (Function.Kill) or timed out stays down (every later invocation fails
// with Runtime.ExitError); a Pool replaces it. It is held as Lambda holds
// one (sandbox.go; a cgroup below this process's own, made with
// shared/proclimit, or the fallbacks Function.Limits names):
//
//   - Memory: Config.MemoryMB is a memory limit (swap included). Past it
//     the kernel kills the process and the invocation fails as Lambda
//     reports it: FunctionError "Unhandled", errorType
//     "Runtime.OutOfMemory", errorMessage "RequestId: <id> Error: Runtime
//     exited with error: signal: killed". The message is the one
//     CloudWatch shows for an out-of-memory kill
//     (https://www.smplogs.com/guides/lambda-memory-errors,
//     https://github.com/DataBiosphere/azul/issues/3485, once under
//     errorType Runtime.ExitError); the type is the one Lambda has given
//     it since (the Telemetry API's platform.report and
//     platform.runtimeDone carry errorType "Runtime.OutOfMemory":
//     https://github.com/DataDog/datadog-lambda-extension/pull/776;
//     "Error Type: Runtime.OutOfMemory" in
//     https://github.com/nasa-gcn/gcn.nasa.gov/pull/3628). Without a
//     writable cgroup, RLIMIT_AS holds it and the Go runtime exits "fatal
//     error: out of memory" (message "... exit status 2").
//   - Freezing: "Lambda freezes the execution environment when the runtime
//     and each extension have completed and there are no pending events"
//     (https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html).
//     A runtime says it has completed by asking for the next invocation:
//     when it does and none waits (after its init, or its answer), it is
//     frozen (cgroup freezer, or SIGSTOP of its process group) until the
//     next invocation is handed to it. No goroutine runs in between.
//   - CPU: Config.VCPU gives the process, from its start, the CPU share
//     Lambda gives its memory (a CFS quota). AWS documents no CPU boost
//     during init; one was measured for managed runtimes whose init was
//     free (two unthrottled vCPUs below 3,008 MB,
//     https://bitesizedserverless.com/bite/lambda-cold-start-bootstrap/),
//     none for custom runtimes like ours (provided.al2023), whose init was
//     always billed; so init runs at the function's share.
//   - Init: limited to InitLimit (10 s). Past it the runtime is ended and
//     the first invocation starts it again, the retried init and the
//     handler within the function timeout (Sandbox.Timedout past it), as
//     Lambda does (see InitLimit). Function.InitDuration is Lambda's Init
//     Duration; a cold start's latency is it plus the first invocation's,
//     and both are billed: custom runtimes always were, and since
//     1 August 2025 every on-demand function's init is
//     (https://aws.amazon.com/blogs/compute/aws-lambda-standardizes-billing-for-init-phase/).
//
// The Runtime API is served here, not by AWS's Runtime Interface Emulator
// (github.com/aws/aws-lambda-runtime-interface-emulator, cmd/aws-lambda-rie;
// tried at v0.0.0-20261030222936-bef5c4ba774d with testdata/echo). The
// emulator serves one function per process, under the fixed name
// "function" (ARN account 012345678912 in us-east-1 whatever the region),
// and its answers are not the Invoke API's: a handler error comes back
// 200 without X-Amz-Function-Error, so a caller cannot tell it from a
// result; a timeout comes back 200 as the text "Task timed out after 3.00
// seconds", not a Sandbox.Timedout document; a crash comes back 502 with
// the runtime's last document, not Runtime.ExitError. Its timeout is whole
// seconds (AWS_LAMBDA_FUNCTION_TIMEOUT), it has no 10-second init limit
// (the init gets the function timeout), no trace ids, and it runs the
// bootstrap as its child, so that a cgroup or freeze holding the function
// would hold the emulator too. Every invocation the harness makes needs
// the error shapes (the HTTP API, the Invoke API, SQS batches decide by
// them), so no function runs under it.
package lambdatest
