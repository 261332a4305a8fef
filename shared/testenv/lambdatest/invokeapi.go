package lambdatest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// MaxRequestBytes is the largest payload a synchronous invocation accepts.
const MaxRequestBytes = 6 * 1024 * 1024

// Service serves the Lambda Invoke API
// (POST /2015-03-31/functions/{FunctionName}/invocations) on a free
// loopback port and hands each invocation to the named function's Runtime
// API. Point an AWS SDK at it with AWS_ENDPOINT_URL_LAMBDA=Service.URL().
// It signs nothing and checks only that a request is signed for Lambda in
// its region. Supported invocation types: RequestResponse and DryRun.
type Service struct {
	region string
	srv    *http.Server
	url    string

	mu        sync.Mutex
	functions map[string]*Function // by name
}

// NewService starts an Invoke API for functions in region ("" for
// DefaultRegion). Add the functions it serves with Add.
func NewService(region string) (*Service, error) {
	if region == "" {
		region = DefaultRegion
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("invoke API: listen: %w", err)
	}
	s := &Service{region: region, url: "http://" + ln.Addr().String(), functions: map[string]*Function{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2015-03-31/functions/{name}/invocations", s.handleInvoke)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeServiceError(w, http.StatusNotFound, "UnknownOperationException", r.Method+" "+r.URL.Path+" is not an operation this service offers")
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // returns ErrServerClosed on Close
	return s, nil
}

// URL is the endpoint, e.g. http://127.0.0.1:40123.
func (s *Service) URL() string { return s.url }

// Add makes fn invocable by its name or ARN.
func (s *Service) Add(fn *Function) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.functions[fn.Name] = fn
}

// Close stops serving.
func (s *Service) Close() error { return s.srv.Close() }

// handleInvoke serves one invocation: it checks the request, hands the
// payload to the function's Runtime API and answers with what the
// function returned.
func (s *Service) handleInvoke(w http.ResponseWriter, r *http.Request) {
	if !s.signedForLambda(r) {
		writeServiceError(w, http.StatusForbidden, "InvalidSignatureException",
			"the request is not signed with AWS Signature Version 4 for lambda in "+s.region)
		return
	}
	fn, ok := s.function(w, r)
	if !ok {
		return
	}
	payload, ok := readPayload(w, r)
	if !ok {
		return
	}
	switch t := r.Header.Get("X-Amz-Invocation-Type"); t {
	case "", "RequestResponse":
	case "DryRun":
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		writeServiceError(w, http.StatusBadRequest, "InvalidParameterValueException",
			"invocation type "+t+" is not supported here; use RequestResponse or DryRun")
		return
	}
	resp, err := fn.Runtime.InvokeWithTrace(r.Context(), payload, r.Header.Get("X-Amzn-Trace-Id"))
	if err != nil {
		writeServiceError(w, http.StatusInternalServerError, "ServiceException", err.Error())
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Amzn-Requestid", resp.RequestID)
	h.Set("X-Amz-Executed-Version", "$LATEST")
	if resp.FunctionError != "" {
		h.Set("X-Amz-Function-Error", resp.FunctionError)
	}
	w.WriteHeader(http.StatusOK)
	w.Write(resp.Payload) //nolint:errcheck
}

// function returns the function that r invokes; when there is none, it
// answers r and reports false.
func (s *Service) function(w http.ResponseWriter, r *http.Request) (*Function, bool) {
	name := r.PathValue("name")
	if q := r.URL.Query().Get("Qualifier"); q != "" && q != "$LATEST" {
		writeServiceError(w, http.StatusNotFound, "ResourceNotFoundException",
			"Function not found: "+FunctionArn(s.region, functionName(name))+":"+q)
		return nil, false
	}
	s.mu.Lock()
	fn, ok := s.functions[functionName(name)]
	s.mu.Unlock()
	if !ok {
		writeServiceError(w, http.StatusNotFound, "ResourceNotFoundException",
			"Function not found: "+FunctionArn(s.region, functionName(name)))
	}
	return fn, ok
}

// readPayload returns r's payload, "{}" when it is empty; when it is too
// large or not JSON, it answers r and reports false.
func readPayload(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	payload, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	if err != nil {
		writeServiceError(w, http.StatusBadRequest, "InvalidRequestContentException", "could not read the request: "+err.Error())
		return nil, false
	}
	if len(payload) > MaxRequestBytes {
		writeServiceError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeException",
			fmt.Sprintf("Request must be smaller than %d bytes for the InvokeFunction operation", MaxRequestBytes))
		return nil, false
	}
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	if !json.Valid(payload) {
		writeServiceError(w, http.StatusBadRequest, "InvalidRequestContentException", "Could not parse request body into json")
		return nil, false
	}
	return payload, true
}

// signedForLambda checks the SigV4 credential scope: <key>/<date>/<region>/lambda/aws4_request.
func (s *Service) signedForLambda(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 Credential=")
	if !ok {
		return false
	}
	scope, _, _ := strings.Cut(rest, ",")
	parts := strings.Split(scope, "/")
	return len(parts) == 5 && parts[2] == s.region && parts[3] == "lambda" && parts[4] == "aws4_request"
}

// functionName accepts a name, a full ARN or a partial ARN
// (123456789012:function:name), with or without a :qualifier.
func functionName(s string) string {
	if i := strings.LastIndex(s, "function:"); i >= 0 {
		s = s[i+len("function:"):]
	}
	name, _, _ := strings.Cut(s, ":")
	return name
}

// writeServiceError answers in the Lambda API's REST-JSON error form.
func writeServiceError(w http.ResponseWriter, status int, code, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Amzn-Errortype", code)
	h.Set("X-Amzn-Requestid", newRequestID())
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"Type": "User", "message": msg})
	w.Write(b) //nolint:errcheck
}
