// Package awscall bounds every AWS call (LoadConfig) and says how a failed
// one (DynamoDB, S3) failed, for the adapters that map it once onto the
// storage errors of package store:
//
//   - the service answered with an error (a refusal, throttling, a missing
//     table or bucket, denied access): the request was decided, and a write
//     changed nothing;
//   - the request never left (no connection): nothing changed either;
//   - it was sent and no answer came (the service hung, the connection
//     broke, the deadline passed): a write may or may not have been
//     applied.
//
// Wrap turns such an error into one that wraps store.ErrStorage (plus
// store.ErrThrottled or store.ErrMaybeDone where they apply) with a
// sentence saying which.
package awscall

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/toolshed/toolshed/shared/store"
)

// Status returns the HTTP status of the service's answer, or 0 when no
// answer came.
func Status(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// Code returns the service's error code ("ResourceNotFoundException",
// "NoSuchBucket", …), or "".
func Code(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// NotSent reports whether the request never reached the service whole:
// no connection could be made, or writing the request failed (a pooled
// connection the service had closed), so it cannot have been carried out.
func NotSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && (op.Op == "dial" || op.Op == "write") ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// throttles are the error codes with which AWS services slow callers down.
var throttles = map[string]bool{
	"ThrottlingException": true, "Throttling": true, "ProvisionedThroughputExceededException": true,
	"RequestLimitExceeded": true, "TooManyRequestsException": true, "SlowDown": true,
	"RequestThrottled": true, "RequestThrottledException": true,
}

// Throttled reports whether the service refused the call to slow down.
func Throttled(err error) bool {
	s := Status(err)
	return throttles[Code(err)] || s == http.StatusTooManyRequests || s == http.StatusServiceUnavailable
}

// Wrap describes the failure of a call on what (e.g. "dynamodb put task
// 3", "s3 write workspace/acme/a.txt") by service, a write when write is
// set, as an error wrapping store.ErrStorage.
func Wrap(service, what string, err error, write bool) error {
	if nc, ok := NoCredentials(err); ok {
		return noCredentials{fmt.Errorf("%s: %w", what, nc)}
	}
	status, code := Status(err), Code(err)
	why := service + " failed"
	extra := []error{store.ErrStorage}
	switch {
	case Throttled(err):
		why = service + " is throttling requests"
		extra = append(extra, store.ErrThrottled)
	case code == "ResourceNotFoundException":
		why = "the " + service + " table does not exist (check the table names in the configuration)"
	case code == "NoSuchBucket":
		why = "the " + service + " bucket does not exist (check TOOLSHED_BUCKET)"
	case status == http.StatusForbidden || code == "AccessDeniedException" || code == "AccessDenied" ||
		code == "UnrecognizedClientException" || code == "InvalidAccessKeyId":
		why = service + " refused access (check the function's IAM role and credentials)"
	case status != 0:
	case NotSent(err):
		why = service + " cannot be reached"
	default:
		why = service + " did not answer"
		if write {
			extra = append(extra, store.ErrMaybeDone)
		}
	}
	args := []any{what, why}
	format := "%s: %s"
	for _, e := range extra {
		format += ": %w"
		args = append(args, e)
	}
	args = append(args, err)
	return fmt.Errorf(format+": %w", args...)
}

// noCredentials is a call that found no credentials: a storage error
// whose message is only what was called and how to provide credentials
// ("storage unavailable" would send a person looking at the service).
type noCredentials struct{ error }

func (e noCredentials) Unwrap() []error { return []error{e.error, store.ErrStorage} }
