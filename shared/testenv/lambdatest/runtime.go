package lambdatest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The Runtime API, version 2018-06-01
// (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html).
const (
	apiPrefix = "/2018-06-01/runtime/"

	headerRequestID    = "Lambda-Runtime-Aws-Request-Id"
	headerDeadline     = "Lambda-Runtime-Deadline-Ms"
	headerFunctionArn  = "Lambda-Runtime-Invoked-Function-Arn"
	headerTraceID      = "Lambda-Runtime-Trace-Id"
	headerErrorType    = "Lambda-Runtime-Function-Error-Type"
	trailerErrorBody   = "Lambda-Runtime-Function-Error-Body"
	functionErrorValue = "Unhandled" // X-Amz-Function-Error of every error Lambda reports

	// MaxResponseBytes is the largest response a synchronous invocation may
	// return (6 MB, plus the 100 bytes Lambda allows over it).
	MaxResponseBytes = 6*1024*1024 + 100
)

// The errorType values of errors Lambda itself reports, and those the
// Runtime API answers a runtime that breaks the protocol with.
const (
	ErrorExit              = "Runtime.ExitError"
	ErrorOutOfMemory       = "Runtime.OutOfMemory"
	ErrorTimeout           = "Sandbox.Timedout"
	ErrorResponseTooLarge  = "Function.ResponseSizeTooLarge"
	errInvalidRequestID    = "InvalidRequestID"
	errInvalidState        = "InvalidStateTransition"
	errRequestTooLarge     = "RequestEntityTooLarge"
	errUnknownRuntimeRoute = "NotFound"
)

// Response is what an invocation produced, as the Lambda service would
// return it to the caller of Invoke.
type Response struct {
	RequestID string
	TraceID   string
	// Payload is the function's response, or the error document
	// ({"errorMessage","errorType",...}) when FunctionError is set.
	Payload []byte
	// FunctionError is "" on success and "Unhandled" when the invocation
	// failed (the X-Amz-Function-Error header of the Invoke API).
	FunctionError string
	// ErrorType is the error's type: the Lambda-Runtime-Function-Error-Type
	// header the runtime sent, or one of Lambda's own (ErrorExit, ...).
	ErrorType string
}

// Invocation is one invocation a runtime was handed, and its outcome.
type Invocation struct {
	Event    []byte
	Response Response
}

// RuntimeConfig describes the function a Runtime serves.
type RuntimeConfig struct {
	// FunctionArn is sent as Lambda-Runtime-Invoked-Function-Arn.
	FunctionArn string
	// Timeout is the function's timeout; each invocation's deadline is its
	// hand-over to the runtime plus Timeout. Default DefaultTimeout.
	Timeout time.Duration
	// OnTimeout, when set, is called once an invocation runs past its
	// deadline; Lambda then discards the execution environment.
	OnTimeout func()
	// InitLimit, when set, is how long the runtime's init may take (to
	// its first GET .../invocation/next): past it OnInitTimeout is called
	// (it ends the runtime), and the next invocation calls RetryInit (it
	// starts the runtime again) and waits for that init within its own
	// deadline, as Lambda does (see InitLimit).
	InitLimit     time.Duration
	OnInitTimeout func()
	RetryInit     func() error
	// Freeze, when set, is called when the runtime asks for the next
	// invocation and none waits (its init, or its last invocation, is
	// over), and Thaw before it is handed the next one: Lambda freezes
	// the execution environment in between.
	Freeze, Thaw func()
}

// InitLimit is how long Lambda lets an on-demand function's init phase
// take. "The Init phase is limited to 10 seconds. If all three tasks do
// not complete within 10 seconds, Lambda retries the Init phase at the
// time of the first function invocation with the configured function
// timeout." (https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html,
// "Init phase"); the retried init and the invocation together get the
// function timeout, and an init slower than that fails the invocation
// with Sandbox.Timedout (CloudWatch shows "INIT_REPORT Init Duration:
// 180000.45 ms Phase: invoke Status: timeout", as reported in
// https://github.com/DataDog/datadog-lambda-extension/issues/1237).
const InitLimit = 10 * time.Second

// DefaultTimeout is Lambda's default function timeout.
const DefaultTimeout = 3 * time.Second

// Runtime serves the Lambda Runtime API for one execution environment on a
// free loopback port: it hands invocations to the runtime one at a time
// (GET .../invocation/next), takes its answers (POST .../invocation/{id}/
// response and .../error) and a failed start (POST .../init/error).
type Runtime struct {
	cfg  RuntimeConfig
	srv  *http.Server
	addr string

	turn   chan struct{}    // holds a token while an invocation runs
	next   chan *invocation // Invoke → the runtime's waiting /next
	ready  chan struct{}    // closed at the first /next
	late   chan struct{}    // closed when the init ran past InitLimit
	failed chan struct{}    // closed on /init/error
	gone   chan struct{}    // closed by Shutdown
	closed chan struct{}    // closed by Close

	mu          sync.Mutex
	readyAt     time.Time
	initError   Response // valid once failed is closed
	goneType    string
	goneReason  string
	initRetried bool
	current     *invocation // handed out, not yet answered
	invocations []Invocation
	shutdown    sync.Once
	closeOnce   sync.Once
}

type invocation struct {
	id       string
	traceID  string
	event    []byte
	deadline time.Time
	done     chan Response // buffered: one answer
}

// NewRuntime starts a Runtime API on 127.0.0.1 and a free port.
func NewRuntime(cfg RuntimeConfig) (*Runtime, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("runtime API: listen: %w", err)
	}
	r := &Runtime{
		cfg:    cfg,
		addr:   ln.Addr().String(),
		turn:   make(chan struct{}, 1),
		next:   make(chan *invocation),
		ready:  make(chan struct{}),
		late:   make(chan struct{}),
		failed: make(chan struct{}),
		gone:   make(chan struct{}),
		closed: make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+apiPrefix+"invocation/next", r.handleNext)
	mux.HandleFunc("POST "+apiPrefix+"invocation/{id}/response", r.handleResponse)
	mux.HandleFunc("POST "+apiPrefix+"invocation/{id}/error", r.handleError)
	mux.HandleFunc("POST "+apiPrefix+"init/error", r.handleInitError)
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		writeAPIError(w, http.StatusNotFound, errUnknownRuntimeRoute, req.Method+" "+req.URL.Path+" is not part of the Runtime API")
	})
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln) //nolint:errcheck // returns ErrServerClosed on Close
	if cfg.InitLimit > 0 {
		go r.watchInit()
	}
	return r, nil
}

// watchInit ends an init that runs past its limit.
func (r *Runtime) watchInit() {
	timer := time.NewTimer(r.cfg.InitLimit)
	defer timer.Stop()
	select {
	case <-timer.C:
		if r.cfg.OnInitTimeout != nil {
			r.cfg.OnInitTimeout()
		}
		close(r.late)
	case <-r.ready:
	case <-r.failed:
	case <-r.gone:
	case <-r.closed:
	}
}

// Addr is the value for AWS_LAMBDA_RUNTIME_API ("127.0.0.1:port").
func (r *Runtime) Addr() string { return r.addr }

// Ready is closed when the runtime first asks for an invocation: its
// initialisation is over.
func (r *Runtime) Ready() <-chan struct{} { return r.ready }

// ReadyAt is when the runtime first asked for an invocation (zero before).
func (r *Runtime) ReadyAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.readyAt
}

// InitError returns the error the runtime reported on /init/error, if any.
func (r *Runtime) InitError() (Response, bool) {
	select {
	case <-r.failed:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.initError, true
	default:
		return Response{}, false
	}
}

// Invocations returns every invocation handed to the runtime so far, with
// its outcome, oldest first.
func (r *Runtime) Invocations() []Invocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Invocation(nil), r.invocations...)
}

// Shutdown tells the Runtime that its execution environment is gone (the
// runtime process exited) for reason, e.g. "Runtime exited with error:
// exit status 1". The invocation under way and every later one fail with
// errType (ErrorExit, or ErrorOutOfMemory when the process was killed for
// its memory), or with the init error the runtime reported before
// exiting.
func (r *Runtime) Shutdown(errType, reason string) {
	r.shutdown.Do(func() {
		r.mu.Lock()
		r.goneType, r.goneReason = errType, reason
		r.mu.Unlock()
		close(r.gone)
	})
}

// Close stops serving the Runtime API.
func (r *Runtime) Close() error {
	r.closeOnce.Do(func() { close(r.closed) })
	return r.srv.Close()
}

// Invoke runs one invocation of event with a fresh trace id.
func (r *Runtime) Invoke(ctx context.Context, event []byte) (Response, error) {
	return r.InvokeWithTrace(ctx, event, "")
}

// InvokeWithTrace runs one invocation of event, passing traceID (an X-Ray
// trace header; a fresh one when empty) to the runtime. Invocations run one
// at a time, in turn. It waits for the runtime to be ready as long as ctx
// allows, then for its answer until the function's deadline. The error is
// ctx's, or says the Runtime was closed: everything the function does
// wrong comes back as a Response with FunctionError set, as the Invoke API
// returns it.
func (r *Runtime) InvokeWithTrace(ctx context.Context, event []byte, traceID string) (Response, error) {
	select {
	case r.turn <- struct{}{}:
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
	inv := &invocation{id: newRequestID(), traceID: traceID, event: event, done: make(chan Response, 1)}
	if inv.traceID == "" {
		inv.traceID = newTraceID()
	}
	resp, handedOver, err := r.run(ctx, inv)
	if err != nil && handedOver {
		// The caller gave up, but the runtime still works on it: the next
		// invocation waits for this one to end.
		go func() {
			r.await(context.Background(), inv)
			<-r.turn
		}()
		return Response{}, err
	}
	<-r.turn
	if err != nil {
		return Response{}, err
	}
	r.mu.Lock()
	r.invocations = append(r.invocations, Invocation{Event: event, Response: resp})
	r.mu.Unlock()
	return resp, nil
}

// run hands inv to the runtime and waits for its outcome.
func (r *Runtime) run(ctx context.Context, inv *invocation) (resp Response, handedOver bool, err error) {
	if resp, ok := r.unavailable(inv); ok {
		return resp, false, nil
	}
	if err := r.awaitInit(ctx); err != nil {
		return Response{}, false, err
	}
	inv.deadline = time.Now().Add(r.cfg.Timeout)
	timer := time.NewTimer(time.Until(inv.deadline))
	defer timer.Stop()
	select {
	case r.next <- inv:
	case <-timer.C: // a retried init took the whole timeout
		return r.timedOut(inv), false, nil
	case <-r.failed:
		resp, _ := r.unavailable(inv)
		return resp, false, nil
	case <-r.gone:
		resp, _ := r.unavailable(inv)
		return resp, false, nil
	case <-r.closed:
		return Response{}, false, errors.New("runtime API closed")
	case <-ctx.Done():
		return Response{}, false, ctx.Err()
	}
	resp, err = r.await(ctx, inv)
	return resp, true, err
}

// awaitInit waits until the runtime's init is over, or has failed, or
// ran past its limit: then this invocation starts it again, and the
// retried init counts in its deadline.
func (r *Runtime) awaitInit(ctx context.Context) error {
	select {
	case <-r.ready:
	case <-r.late:
		r.mu.Lock()
		retry := !r.initRetried
		r.initRetried = true
		r.mu.Unlock()
		if retry && r.cfg.RetryInit != nil {
			if err := r.cfg.RetryInit(); err != nil {
				return fmt.Errorf("runtime API: retry the init: %w", err)
			}
		}
	case <-r.failed:
	case <-r.gone:
	case <-r.closed:
		return errors.New("runtime API closed")
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// timedOut is the answer to an invocation that ran past its deadline; the
// execution environment is discarded.
func (r *Runtime) timedOut(inv *invocation) Response {
	r.forget(inv)
	if r.cfg.OnTimeout != nil {
		r.cfg.OnTimeout()
	}
	msg := fmt.Sprintf("RequestId: %s Error: Task timed out after %.2f seconds", inv.id, r.cfg.Timeout.Seconds())
	return lambdaError(inv, ErrorTimeout, msg)
}

// await waits for the answer to an invocation the runtime holds.
func (r *Runtime) await(ctx context.Context, inv *invocation) (Response, error) {
	timer := time.NewTimer(time.Until(inv.deadline))
	defer timer.Stop()
	select {
	case resp := <-inv.done:
		return resp, nil
	case <-r.gone:
		// An answer may have raced the exit.
		select {
		case resp := <-inv.done:
			return resp, nil
		default:
		}
		r.forget(inv)
		resp, _ := r.unavailable(inv)
		return resp, nil
	case <-timer.C:
		return r.timedOut(inv), nil
	case <-r.closed:
		return Response{}, errors.New("runtime API closed")
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
}

// unavailable answers for an environment that cannot run inv: it reported
// an init error, or its process is gone.
func (r *Runtime) unavailable(inv *invocation) (Response, bool) {
	select {
	case <-r.failed:
		r.mu.Lock()
		defer r.mu.Unlock()
		resp := r.initError
		resp.RequestID, resp.TraceID = inv.id, inv.traceID
		return resp, true
	default:
	}
	select {
	case <-r.gone:
		r.mu.Lock()
		errType, reason := r.goneType, r.goneReason
		r.mu.Unlock()
		return lambdaError(inv, errType, fmt.Sprintf("RequestId: %s Error: %s", inv.id, reason)), true
	default:
		return Response{}, false
	}
}

// forget drops inv as the current invocation, so a late answer is refused.
func (r *Runtime) forget(inv *invocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current == inv {
		r.current = nil
	}
}

func (r *Runtime) handleNext(w http.ResponseWriter, req *http.Request) {
	if _, failed := r.InitError(); failed {
		writeAPIError(w, http.StatusForbidden, errInvalidState, "the runtime reported an init error; it must exit")
		return
	}
	r.mu.Lock()
	if r.readyAt.IsZero() {
		r.readyAt = time.Now()
		close(r.ready)
	}
	busy := r.current
	r.mu.Unlock()
	if busy != nil {
		writeAPIError(w, http.StatusForbidden, errInvalidState,
			"the runtime asked for the next invocation before answering "+busy.id)
		return
	}
	inv, ok := r.nextInvocation(req)
	if !ok {
		writeAPIError(w, http.StatusInternalServerError, "ServiceUnavailable", "the runtime API is shutting down")
		return
	}
	r.mu.Lock()
	r.current = inv
	r.mu.Unlock()
	h := w.Header()
	h.Set(headerRequestID, inv.id)
	h.Set(headerDeadline, strconv.FormatInt(inv.deadline.UnixMilli(), 10))
	h.Set(headerFunctionArn, r.cfg.FunctionArn)
	h.Set(headerTraceID, inv.traceID)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(inv.event) //nolint:errcheck // a broken runtime shows as a timeout
}

// nextInvocation waits for the invocation to hand the runtime, with the
// runtime frozen while none waits. It is false when the request ended or
// the Runtime was closed first.
func (r *Runtime) nextInvocation(req *http.Request) (*invocation, bool) {
	select {
	case inv := <-r.next:
		return inv, true
	default:
	}
	if r.cfg.Freeze != nil {
		r.cfg.Freeze()
		defer r.cfg.Thaw()
	}
	select {
	case inv := <-r.next:
		return inv, true
	case <-req.Context().Done():
		return nil, false
	case <-r.closed:
		return nil, false
	}
}

func (r *Runtime) handleResponse(w http.ResponseWriter, req *http.Request) {
	inv, ok := r.answering(w, req)
	if !ok {
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxResponseBytes+1))
	switch {
	case err != nil:
		finish(inv, lambdaError(inv, "Runtime.TruncatedResponse", "reading the response failed: "+err.Error()))
		writeAPIError(w, http.StatusBadRequest, "TruncatedHTTPRequest", err.Error())
		return
	case len(body) > MaxResponseBytes:
		msg := fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", MaxResponseBytes)
		finish(inv, lambdaError(inv, ErrorResponseTooLarge, msg))
		writeAPIError(w, http.StatusRequestEntityTooLarge, errRequestTooLarge, msg)
		return
	}
	// A runtime that fails while streaming its response says so in
	// trailers (aws-lambda-go does when the handler's io.Reader fails).
	if errType := req.Trailer.Get(headerErrorType); errType != "" {
		payload, err := base64.StdEncoding.DecodeString(req.Trailer.Get(trailerErrorBody))
		if err != nil || len(payload) == 0 {
			payload = errorDocument(errType, "the function failed while sending its response")
		}
		finish(inv, Response{RequestID: inv.id, TraceID: inv.traceID, Payload: payload,
			FunctionError: functionErrorValue, ErrorType: errType})
	} else {
		finish(inv, Response{RequestID: inv.id, TraceID: inv.traceID, Payload: body})
	}
	writeAccepted(w)
}

func (r *Runtime) handleError(w http.ResponseWriter, req *http.Request) {
	inv, ok := r.answering(w, req)
	if !ok {
		return
	}
	errType, payload := readError(req)
	finish(inv, Response{RequestID: inv.id, TraceID: inv.traceID, Payload: payload,
		FunctionError: functionErrorValue, ErrorType: errType})
	writeAccepted(w)
}

func (r *Runtime) handleInitError(w http.ResponseWriter, req *http.Request) {
	errType, payload := readError(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.readyAt.IsZero() {
		writeAPIError(w, http.StatusForbidden, errInvalidState, "init errors are only accepted before the first /invocation/next")
		return
	}
	select {
	case <-r.failed:
		writeAPIError(w, http.StatusForbidden, errInvalidState, "an init error was already reported")
		return
	default:
	}
	r.initError = Response{Payload: payload, FunctionError: functionErrorValue, ErrorType: errType}
	close(r.failed)
	writeAccepted(w)
}

// answering returns the invocation a POST .../invocation/{id}/... answers,
// or writes the Runtime API's refusal.
func (r *Runtime) answering(w http.ResponseWriter, req *http.Request) (*invocation, bool) {
	id := req.PathValue("id")
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current == nil || r.current.id != id {
		writeAPIError(w, http.StatusBadRequest, errInvalidRequestID, "no invocation "+strconv.Quote(id)+" is in progress")
		return nil, false
	}
	inv := r.current
	r.current = nil
	return inv, true
}

// finish delivers the outcome of inv (once: answering hands it out once).
func finish(inv *invocation, resp Response) { inv.done <- resp }

// readError reads an error report: its type from the header (or the
// document's errorType) and the document itself. An empty or unreadable
// body becomes a document built from the header, as Lambda does.
func readError(req *http.Request) (errType string, payload []byte) {
	errType = req.Header.Get(headerErrorType)
	payload, err := io.ReadAll(io.LimitReader(req.Body, MaxResponseBytes))
	var doc struct {
		ErrorType string `json:"errorType"`
	}
	if err != nil || len(payload) == 0 || json.Unmarshal(payload, &doc) != nil {
		if errType == "" {
			errType = "Runtime.Unknown"
		}
		return errType, errorDocument(errType, "")
	}
	if errType == "" {
		errType = doc.ErrorType
	}
	return errType, payload
}

func lambdaError(inv *invocation, errType, msg string) Response {
	return Response{RequestID: inv.id, TraceID: inv.traceID, Payload: errorDocument(errType, msg),
		FunctionError: functionErrorValue, ErrorType: errType}
}

// errorDocument is Lambda's error format.
func errorDocument(errType, msg string) []byte {
	b, _ := json.Marshal(struct {
		ErrorMessage string `json:"errorMessage"`
		ErrorType    string `json:"errorType"`
	}{msg, errType})
	return b
}

func writeAccepted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, `{"status":"OK"}`) //nolint:errcheck
}

func writeAPIError(w http.ResponseWriter, status int, errType, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(errorDocument(errType, msg)) //nolint:errcheck
}

// newRequestID returns a random UUID (version 4), as Lambda's request ids.
func newRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return strings.Join([]string{h[:8], h[8:12], h[12:16], h[16:20], h[20:]}, "-")
}

// newTraceID returns an X-Ray trace header for a new, sampled trace.
func newTraceID() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=1", time.Now().Unix(), h[:24], h[24:40])
}
