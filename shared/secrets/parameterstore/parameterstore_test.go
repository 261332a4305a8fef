package parameterstore_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/toolshed/toolshed/shared/secrets"
	"github.com/toolshed/toolshed/shared/secrets/parameterstore"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// TestFetch reads a SecureString parameter from Parameter Store on
// moto_server.
func TestFetch(t *testing.T) {
	moto := emulator.StartMoto(t)
	cfg := aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("dummy", "dummy", ""),
		BaseEndpoint: aws.String(moto.Endpoint),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := ssm.NewFromConfig(cfg).PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String("/toolshed/embed-key"),
		Value: aws.String("sk-secret"), Type: types.ParameterTypeSecureString}); err != nil {
		t.Fatal(err)
	}
	fetch := parameterstore.Fetch(cfg)
	got, err := fetch(ctx, "/toolshed/embed-key")
	if err != nil || got != "sk-secret" {
		t.Errorf("got %q, %v; want the decrypted value", got, err)
	}
	if _, err := fetch(ctx, "/toolshed/none"); err == nil {
		t.Error("a missing parameter: no error")
	}
}

// TestFetchSecretsManagerReference reads a Secrets Manager secret through
// Parameter Store's reference to it, as the functions read the cursor key
// the CDK app generates.
func TestFetchSecretsManagerReference(t *testing.T) {
	moto := emulator.StartMoto(t)
	// moto takes Secrets Manager's JSON protocol unsigned; the SDK's
	// Secrets Manager client is no dependency of the functions.
	req, _ := http.NewRequest(http.MethodPost, moto.Endpoint+"/", strings.NewReader(`{"Name":"Toolshed-cursor-key","SecretString":"k3y-from-secrets-manager"}`))
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "secretsmanager.CreateSecret")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=dummy/20250101/us-east-1/secretsmanager/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CreateSecret: %s", resp.Status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := parameterstore.Fetch(emulator.ClientConfig(moto.Endpoint))(ctx, secrets.SecretsManagerPrefix+"Toolshed-cursor-key")
	if err != nil || got != "k3y-from-secrets-manager" {
		t.Errorf("got %q, %v; want the secret's value", got, err)
	}
}
