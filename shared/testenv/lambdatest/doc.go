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
//     to a Runtime, and measures its init time and peak RSS.
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
// with Runtime.ExitError); a Pool replaces it. Config.VCPU gives a
// function, after its init, the CPU share Lambda gives its memory (a
// cgroup CFS quota), so a cold call is measured at the speed it would run
// at.
package lambdatest
