package awscall

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// CredentialsHelp says how to give a command AWS credentials.
const CredentialsHelp = "sign in with `aws configure` or `aws sso login` and set AWS_PROFILE to that profile, " +
	"or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_REGION)"

// NoCredentialsError is a call that never left because no AWS credentials
// were found to sign it with. The SDK's own words for it name the last
// place it looked ("no EC2 IMDS role found"), which tells a person at a
// laptop nothing, so its message leads with what is missing and how to
// provide it, and keeps the SDK's words after.
type NoCredentialsError struct{ Cause error }

func (e *NoCredentialsError) Error() string {
	return "no AWS credentials found: " + CredentialsHelp + " (the AWS SDK's search ended with: " + e.Cause.Error() + ")"
}

func (e *NoCredentialsError) Unwrap() error { return e.Cause }

// NoCredentials returns the NoCredentialsError err holds, if any, so that
// a caller can say that instead of the chain of operations around it.
func NoCredentials(err error) (*NoCredentialsError, bool) {
	var nc *NoCredentialsError
	return nc, errors.As(err, &nc)
}

// explained is a credentials provider whose failure is a
// NoCredentialsError.
type explained struct{ aws.CredentialsProvider }

func (p explained) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := p.CredentialsProvider.Retrieve(ctx)
	if err != nil && ctx.Err() == nil {
		return c, &NoCredentialsError{Cause: err}
	}
	return c, err
}

// IsCredentialsProvider lets the SDK see the provider explained wraps
// (it treats anonymous credentials apart).
func (p explained) IsCredentialsProvider(target aws.CredentialsProvider) bool {
	return aws.IsCredentialsProvider(p.CredentialsProvider, target)
}
