package main

import (
	"errors"
	"fmt"
	"maps"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/toolset"
)

// A deployment is configured through the CDK context only (cdk.json's
// "context", or `cdk deploy -c key=value`), never through the environment
// the app synthesizes in: the app's options below, and the functions'
// settings by their variable names (-c TOOLSHED_FETCH_ALLOWED_DOMAINS=…).
// Each option is declared once, as a setting is: parsed and checked at
// synthesis, and listed in docs/deploy.md's options table (a test keeps the
// two equal).
var (
	defaultRepoOption = settings.New("defaultRepo", "",
		"the tenant whose repository snapshot tenants without one read", config.ParseOptionalTenant)
	retentionOption = deploy.SnapshotRetentionOption
	originsOption   = settings.New("allowedOrigins", "*",
		"browser origins the HTTP API answers with CORS, comma-separated (`https://a.example,https://b.example`), or `*` for any", parseOrigins)
	alarmEmailOption = settings.New("alarmEmail", "",
		"an address the alarm topic mails (AWS asks it to confirm first)", parseEmail)
	throttleRateOption = settings.New("throttleRate", "100",
		"requests per second the HTTP API accepts on each route", settings.Positive)
	throttleBurstOption = settings.New("throttleBurst", "200",
		"requests the HTTP API accepts at once on each route", settings.Positive)
	routeThrottlesOption = settings.New("routeThrottles", "",
		"`rate:burst` of a tool's routes, comma-separated, e.g. `grep_codebase=5:10`; a tool whose function has reserved concurrency N gets `N:2N` unless given", parseRouteThrottles)
	concurrencyOption = settings.New("reservedConcurrency", "",
		"`off` reserves none (for an account whose concurrency limit is too low, see below), or `name=N` overrides for the functions of tools (`history` for the history tools' one function) and `gateway`, `authorizer`, `indexer`, `index-worker` (0: none), e.g. `grep_codebase=20,gateway=50`", parseConcurrency)
)

// appOptions are the options above, in docs/deploy.md's order.
var appOptions = []settings.Setting{defaultRepoOption, retentionOption, originsOption, alarmEmailOption,
	throttleRateOption, throttleBurstOption, routeThrottlesOption, concurrencyOption,
	oauthIssuerOption, oauthOption, callbackURLsOption, domainPrefixOption}

// options is a deployment's configuration, read and checked.
type options struct {
	DefaultRepo           string
	SnapshotRetentionDays int
	AllowedOrigins        []string
	AlarmEmail            string
	Throttle              throttle            // every route's
	RouteThrottles        map[string]throttle // by tool, overriding the derived ones
	Concurrency           concurrency
	OAuth                 oauthOptions
	// Settings are the functions' settings the deployment chose, by name.
	Settings map[string]string
}

// throttle is a route's rate (requests per second) and burst.
type throttle struct{ Rate, Burst int }

// concurrency is the reserved concurrency the deployment asks for.
type concurrency struct {
	Off       bool           // reserve none
	Overrides map[string]int // by tool or function name
}

// of returns the reserved concurrency of the named function, declared
// unless the deployment says otherwise (0: none).
func (c concurrency) of(name string, declared int) int {
	if c.Off {
		return 0
	}
	if n, ok := c.Overrides[name]; ok {
		return n
	}
	return declared
}

// appKey matches the context keys that are the app's: plain names. CDK's
// own keys have a ":", "@" or "-" (feature flags, lookups, the CLI's).
var appKey = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// readOptions reads a deployment's configuration from its context values
// (contextValues): an unknown key, or a value an option or a function
// would refuse, fails with every problem named.
func readOptions(ctx map[string]string) (options, error) {
	get := func(k string) string { return ctx[k] }
	known := settingNames(slices.Concat(appOptions, declaredSettings(toolset.Families), deploy.ProcessSettings(), oauthSettings))
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(ctx)) {
		if appKey.MatchString(k) && !slices.Contains(known, k) {
			errs = append(errs, fmt.Errorf("unknown context key %q: the app takes %s", k, strings.Join(known, ", ")))
		}
	}
	r := settings.NewReader(get)
	o := options{
		DefaultRepo:           settings.Read(r, defaultRepoOption),
		SnapshotRetentionDays: settings.Read(r, retentionOption),
		AllowedOrigins:        settings.Read(r, originsOption),
		AlarmEmail:            settings.Read(r, alarmEmailOption),
		Throttle:              throttle{Rate: settings.Read(r, throttleRateOption), Burst: settings.Read(r, throttleBurstOption)},
		RouteThrottles:        settings.Read(r, routeThrottlesOption),
		Concurrency:           settings.Read(r, concurrencyOption),
	}
	var err error
	o.OAuth, err = readOAuthOptions(get)
	errs = append(errs, r.Err(), err)
	if err := deploy.CheckSettings(declaredSettings(toolset.Families), get); err != nil {
		errs = append(errs, fmt.Errorf("a setting would stop the functions from starting: %w", err))
	}
	o.Settings = map[string]string{}
	for _, k := range known {
		if v := ctx[k]; v != "" && !slices.Contains(settingNames(appOptions), k) {
			o.Settings[k] = v
		}
	}
	return o, errors.Join(errs...)
}

// contextValues returns the app's own context values (appKey) as strings:
// numbers and booleans as written, a list as comma-separated items.
func contextValues(app awscdk.App) (map[string]string, error) {
	all, _ := app.Node().GetAllContext(nil).(map[string]any)
	out := map[string]string{}
	for k, v := range all {
		if !appKey.MatchString(k) {
			continue
		}
		s, err := contextString(v)
		if err != nil {
			return nil, fmt.Errorf("context %s: %w", k, err)
		}
		out[k] = s
	}
	return out, nil
}

func contextString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(v), nil
	case []any:
		items := make([]string, len(v))
		for i, item := range v {
			s, err := contextString(item)
			if err != nil {
				return "", err
			}
			items[i] = s
		}
		return strings.Join(items, ","), nil
	}
	return "", fmt.Errorf("%v: use a string, a number, a boolean or a list of them", v)
}

func settingNames(ss []settings.Setting) []string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.Name()
	}
	return names
}

// parseOrigins reads browser origins as a browser sends them,
// scheme://host[:port], or "*" alone.
func parseOrigins(list string) ([]string, error) {
	origins, _ := settings.List(list)
	for _, o := range origins {
		if o != "*" && !isOrigin(o) {
			return nil, fmt.Errorf("%q is not an origin: use scheme://host[:port], e.g. https://a.example, or *", o)
		}
	}
	if len(origins) == 0 {
		return nil, fmt.Errorf("no origin named")
	}
	if len(origins) > 1 && slices.Contains(origins, "*") {
		return nil, fmt.Errorf("* allows every origin and stands alone")
	}
	return origins, nil
}

// isOrigin reports whether o is an origin as a browser sends it in the
// Origin header: http or https, a host, an optional port, nothing else.
func isOrigin(o string) bool {
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		o == u.Scheme+"://"+u.Host
}

func parseEmail(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s {
		return "", fmt.Errorf("use one address, e.g. ops@example.com")
	}
	return s, nil
}

// parseRouteThrottles reads tool=rate:burst items.
func parseRouteThrottles(s string) (map[string]throttle, error) {
	out := map[string]throttle{}
	items, _ := settings.List(s)
	for _, item := range items {
		name, value, _ := strings.Cut(item, "=")
		rate, burst, _ := strings.Cut(value, ":")
		r, errR := settings.Positive(rate)
		b, errB := settings.Positive(burst)
		if errors.Join(errR, errB) != nil {
			return nil, fmt.Errorf("%q: use tool=rate:burst with positive whole numbers, e.g. grep_codebase=5:10", item)
		}
		if !slices.ContainsFunc(tools, func(t toolSpec) bool { return t.Name == name }) {
			return nil, fmt.Errorf("%q: no tool is named %q", item, name)
		}
		out[name] = throttle{Rate: r, Burst: b}
	}
	return out, nil
}

// parseConcurrency reads "off" or name=N items.
func parseConcurrency(s string) (concurrency, error) {
	if s == "off" {
		return concurrency{Off: true}, nil
	}
	c := concurrency{Overrides: map[string]int{}}
	items, _ := settings.List(s)
	for _, item := range items {
		name, value, _ := strings.Cut(item, "=")
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return concurrency{}, fmt.Errorf("%q: use off, or name=N with N a whole number (0: none reserved)", item)
		}
		if !isToolFunction(name) && !slices.Contains(otherFunctionNames, name) {
			return concurrency{}, fmt.Errorf("%q: no function is named %q (tools, families deployed as one function, %s)", item, name, strings.Join(otherFunctionNames, ", "))
		}
		c.Overrides[name] = n
	}
	return c, nil
}

// isToolFunction reports whether a tool function has that name (a tool's,
// or a family's deployed as one function).
func isToolFunction(name string) bool {
	return slices.ContainsFunc(toolFunctions, func(f *functionOfTools) bool { return f.Name == name })
}
