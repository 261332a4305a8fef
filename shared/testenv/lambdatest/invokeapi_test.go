package lambdatest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// TestInvokeAPI calls the Service with the AWS SDK's Lambda client, as the
// gateway does.
func TestInvokeAPI(t *testing.T) {
	svc, err := NewService("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	svc.Add(startEcho(t, Config{Name: "echo"}))
	client := lambda.New(lambda.Options{
		Region:           DefaultRegion,
		Credentials:      credentials.NewStaticCredentialsProvider("AKID", "secret", ""),
		BaseEndpoint:     aws.String(svc.URL()),
		RetryMaxAttempts: 1,
	})
	ctx := context.Background()

	tests := []struct {
		name, function, payload string
		invocationType          types.InvocationType
		wantStatus              int32
		wantError               string
		wantPayload             string
	}{
		{"by name", "echo", `{"echo":"hi"}`, "", 200, "", `"hi"`},
		{"by ARN", "arn:aws:lambda:us-east-1:123456789012:function:echo", `{"echo":2}`, "", 200, "", `2`},
		{"by partial ARN", "123456789012:function:echo:$LATEST", `{"echo":3}`, "", 200, "", `3`},
		{"function error", "echo", `{"fail":"bad"}`, "", 200, "Unhandled", `{"errorMessage":"bad","errorType":"errorString"}`},
		{"dry run", "echo", `{"fail":"not run"}`, types.InvocationTypeDryRun, 204, "", ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(tt.function),
				Payload: []byte(tt.payload), InvocationType: tt.invocationType})
			if err != nil {
				t.Fatal(err)
			}
			if out.StatusCode != tt.wantStatus || aws.ToString(out.FunctionError) != tt.wantError || string(out.Payload) != tt.wantPayload {
				t.Errorf("got %d %q %s, want %d %q %s", out.StatusCode, aws.ToString(out.FunctionError), out.Payload,
					tt.wantStatus, tt.wantError, tt.wantPayload)
			}
			if tt.wantStatus == 200 && aws.ToString(out.ExecutedVersion) != "$LATEST" {
				t.Errorf("ExecutedVersion = %q", aws.ToString(out.ExecutedVersion))
			}
		})
	}

	t.Run("unknown function", func(t *testing.T) {
		_, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("nope"), Payload: []byte(`{}`)})
		var notFound *types.ResourceNotFoundException
		if !errors.As(err, &notFound) || !strings.Contains(err.Error(), "Function not found: arn:aws:lambda:us-east-1:123456789012:function:nope") {
			t.Errorf("got %v, want ResourceNotFoundException", err)
		}
	})
	t.Run("payload not JSON", func(t *testing.T) {
		_, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("echo"), Payload: []byte(`{`)})
		var bad *types.InvalidRequestContentException
		if !errors.As(err, &bad) {
			t.Errorf("got %v, want InvalidRequestContentException", err)
		}
	})
	t.Run("payload too large", func(t *testing.T) {
		big := `"` + strings.Repeat("x", MaxRequestBytes) + `"`
		_, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("echo"), Payload: []byte(big)})
		var tooLarge *types.RequestTooLargeException
		if !errors.As(err, &tooLarge) {
			t.Errorf("got %v, want RequestTooLargeException", err)
		}
	})
	t.Run("unsigned request", func(t *testing.T) {
		resp, err := http.Post(svc.URL()+"/2015-03-31/functions/echo/invocations", "application/json", strings.NewReader(`{"echo":1}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Amzn-Errortype") != "InvalidSignatureException" {
			t.Errorf("got %d %s", resp.StatusCode, resp.Header.Get("X-Amzn-Errortype"))
		}
	})
	t.Run("trace header reaches the runtime", func(t *testing.T) {
		const trace = "Root=1-67890abc-0123456789abcdef01234567;Parent=0123456789abcdef;Sampled=1"
		_, err := client.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("echo"), Payload: []byte(`{"context":true}`)},
			func(o *lambda.Options) {
				o.APIOptions = append(o.APIOptions, smithyhttp.AddHeaderValue("X-Amzn-Trace-Id", trace))
			})
		if err != nil {
			t.Fatal(err)
		}
		inv := svc.functions["echo"].Runtime.Invocations()
		if got := inv[len(inv)-1].Response; got.TraceID != trace || !strings.Contains(string(got.Payload), `"traceId":"`+trace+`"`) {
			t.Errorf("the runtime got trace %q, payload %s", got.TraceID, got.Payload)
		}
	})
}
