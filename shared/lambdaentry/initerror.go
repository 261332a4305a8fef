package lambdaentry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// initErrorType is the Lambda-Runtime-Function-Error-Type of a function
// that could not start (Lambda recommends <category>.<reason>).
const initErrorType = "Runtime.InitError"

// reportInitError tells the Lambda Runtime API at api (host:port, from
// AWS_LAMBDA_RUNTIME_API) that the function could not start. Lambda then
// answers the waiting invocation with the cause instead of a bare
// "Runtime exited with error: exit status 1", and logs it as the init
// error. aws-lambda-go has no call for this, so it is one POST here.
func reportInitError(ctx context.Context, api string, cause error) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	doc, err := json.Marshal(map[string]string{"errorMessage": cause.Error(), "errorType": initErrorType})
	if err != nil {
		return fmt.Errorf("encode init error: %w", err)
	}
	url := "http://" + api + "/2018-06-01/runtime/init/error"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("report init error: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Lambda-Runtime-Function-Error-Type", initErrorType)
	// The Runtime API is link-local: never through a proxy.
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("report init error: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("report init error: POST %s answered %d %s", url, resp.StatusCode, body)
	}
	return nil
}
