// Package parameterstore reads secret settings' values from AWS Systems
// Manager Parameter Store (shared/secrets names where). It is its own
// package so that only the functions that read secrets link the SSM client.
package parameterstore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/toolshed/toolshed/shared/secrets"
)

// Fetch fetches parameters from Parameter Store with cfg, decrypted.
func Fetch(cfg aws.Config) secrets.Fetch {
	client := ssm.NewFromConfig(cfg)
	return func(ctx context.Context, name string) (string, error) {
		out, err := client.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name), WithDecryption: aws.Bool(true)})
		if err != nil {
			return "", err
		}
		if out.Parameter == nil {
			return "", fmt.Errorf("parameter %s: no value in the answer", name)
		}
		return aws.ToString(out.Parameter.Value), nil
	}
}
