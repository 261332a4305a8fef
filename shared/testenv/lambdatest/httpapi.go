package lambdatest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// HTTPAPI stands in for an API Gateway HTTP API in front of Functions. It
// serves HTTP on a free loopback port and turns each request into a
// payload format 2.0 event for the function of its route, once the route's
// Lambda authorizer (simple responses, identity source the Authorization
// header) has let it through with a context, which the event carries; the
// function's response becomes the HTTP answer. What API Gateway answers
// itself, it answers the same way: 404 {"message":"Not Found"} for a
// request no route takes, 401 {"message":"Unauthorized"} without an
// Authorization header on an authorized route (the authorizer is not
// called), 403 {"message":"Forbidden"} when the authorizer refuses, 413
// over the 10 MB payload limit, and 500 {"message":"Internal Server
// Error"} when a function fails. An Authorizer's answers (allow or deny)
// are cached per credential for its CacheTTL, as API Gateway caches a
// Lambda authorizer's by its identity source; a failed call is not.
type HTTPAPI struct {
	srv    *http.Server
	url    string
	routes map[string]Route // by "METHOD /path"
}

// Route sends the requests of one method and path to a function.
type Route struct {
	Method, Path string
	Function     *Function
	Authorizer   *Authorizer // nil: anyone may call the route
}

// Authorizer is a Lambda authorizer (simple responses, identity source
// the Authorization header). Routes that share one share its cache, as
// the routes of one deployed authorizer do.
type Authorizer struct {
	Function *Function
	// CacheTTL is how long an answer serves later requests with the same
	// credential (the authorizer's ResultsCacheTtl); 0: not cached.
	CacheTTL time.Duration

	mu    sync.Mutex
	cache map[string]cachedAnswer // by credential
}

// cachedAnswer is an authorizer's answer for a credential: its context,
// or the status API Gateway answers instead.
type cachedAnswer struct {
	context map[string]any
	status  int
	until   time.Time
}

// maxPayload is the largest request body API Gateway accepts.
const maxPayload = 10 << 20

// NewHTTPAPI starts an HTTP API with routes. Close stops it.
func NewHTTPAPI(routes []Route) (*HTTPAPI, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("HTTP API: listen: %w", err)
	}
	a := &HTTPAPI{url: "http://" + ln.Addr().String(), routes: map[string]Route{}}
	for _, r := range routes {
		a.routes[r.Method+" "+r.Path] = r
	}
	a.srv = &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second}
	go a.srv.Serve(ln) //nolint:errcheck // returns ErrServerClosed on Close
	return a, nil
}

// URL is the API's base URL, e.g. http://127.0.0.1:40123 (a stack's ApiUrl).
func (a *HTTPAPI) URL() string { return a.url }

// Close stops serving.
func (a *HTTPAPI) Close() { a.srv.Close() }

// ServeHTTP answers one request as API Gateway would.
func (a *HTTPAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, ok := a.routes[r.Method+" "+r.URL.Path]
	if !ok {
		gatewayAnswer(w, http.StatusNotFound, "Not Found")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPayload+1))
	if err != nil || len(body) > maxPayload {
		gatewayAnswer(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return
	}
	ev := event(r, route, body)
	if route.Authorizer != nil {
		lambdaCtx, status := authorize(r.Context(), route.Authorizer, ev)
		if status != 0 {
			gatewayAnswer(w, status, http.StatusText(status))
			return
		}
		ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: lambdaCtx}
	}
	// A response without a status is not the structured format, which is
	// all Toolshed's functions answer.
	var resp events.APIGatewayV2HTTPResponse
	if err := invokeJSON(r.Context(), route.Function, ev, &resp); err != nil || resp.StatusCode == 0 {
		gatewayAnswer(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	writeResponse(w, resp)
}

// event is the payload format 2.0 event of r on route.
func event(r *http.Request, route Route, body []byte) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{}
	for k, v := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	query := map[string]string{}
	for k, v := range r.URL.Query() {
		query[k] = strings.Join(v, ",")
	}
	routeKey := route.Method + " " + route.Path
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: routeKey, RawPath: r.URL.EscapedPath(), RawQueryString: r.URL.RawQuery,
		Headers: headers, QueryStringParameters: query,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: routeKey, AccountID: Account, Stage: "$default", RequestID: newRequestID(),
			APIID: "local", DomainName: r.Host, Time: time.Now().UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch: time.Now().UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.Method, Path: r.URL.Path,
				Protocol: r.Proto, SourceIP: hostOf(r.RemoteAddr), UserAgent: r.UserAgent()},
		},
	}
	if utf8.Valid(body) {
		ev.Body = string(body)
	} else {
		ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	return ev
}

// authorize asks the route's authorizer about ev, or its cache: its
// context, or the status API Gateway answers instead (401 without an
// identity, 403 when refused, 500 when the authorizer fails).
func authorize(ctx context.Context, a *Authorizer, ev events.APIGatewayV2HTTPRequest) (map[string]any, int) {
	identity := ev.Headers["authorization"]
	if identity == "" {
		return nil, http.StatusUnauthorized
	}
	a.mu.Lock()
	cached, ok := a.cache[identity]
	a.mu.Unlock()
	if ok && time.Now().Before(cached.until) {
		return cached.context, cached.status
	}
	lambdaCtx, status := callAuthorizer(ctx, a.Function, identity, ev)
	if a.CacheTTL > 0 && status != http.StatusInternalServerError {
		a.mu.Lock()
		if a.cache == nil {
			a.cache = map[string]cachedAnswer{}
		}
		a.cache[identity] = cachedAnswer{context: lambdaCtx, status: status, until: time.Now().Add(a.CacheTTL)}
		a.mu.Unlock()
	}
	return lambdaCtx, status
}

// callAuthorizer invokes the authorizer function about ev.
func callAuthorizer(ctx context.Context, authorizer *Function, identity string, ev events.APIGatewayV2HTTPRequest) (map[string]any, int) {
	req := events.APIGatewayV2CustomAuthorizerV2Request{
		Version: "2.0", Type: "REQUEST", RouteArn: "arn:aws:execute-api:" + DefaultRegion + ":" + Account + ":local/$default/" + ev.RouteKey,
		IdentitySource: []string{identity}, RouteKey: ev.RouteKey, RawPath: ev.RawPath, RawQueryString: ev.RawQueryString,
		Headers: ev.Headers, QueryStringParameters: ev.QueryStringParameters, RequestContext: ev.RequestContext,
	}
	var resp events.APIGatewayV2CustomAuthorizerSimpleResponse
	switch err := invokeJSON(ctx, authorizer, req, &resp); {
	case err != nil:
		return nil, http.StatusInternalServerError
	case !resp.IsAuthorized:
		return nil, http.StatusForbidden
	}
	return resp.Context, 0
}

// invokeJSON invokes fn with event and decodes its answer into out; a
// function error is an error.
func invokeJSON(ctx context.Context, fn *Function, event, out any) error {
	payload, err := json.Marshal(event)
	if err != nil {
		return err
	}
	resp, err := fn.Invoke(ctx, payload)
	if err != nil {
		return err
	}
	if resp.FunctionError != "" {
		return fmt.Errorf("%s: %s: %s", fn.Name, resp.ErrorType, resp.Payload)
	}
	return json.Unmarshal(resp.Payload, out)
}

// writeResponse writes a function's payload format 2.0 response.
func writeResponse(w http.ResponseWriter, resp events.APIGatewayV2HTTPResponse) {
	h := w.Header()
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	for _, c := range resp.Cookies {
		h.Add("Set-Cookie", c)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		decoded, err := base64.StdEncoding.DecodeString(resp.Body)
		if err != nil {
			gatewayAnswer(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		body = decoded
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(body)
}

// gatewayAnswer is an answer of API Gateway itself: {"message": ...}.
func gatewayAnswer(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Apigw-Requestid", newRequestID())
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": message})
}

func hostOf(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}
