// Package localserver runs Toolshed as one local process: every tool in
// process, the embedded store under the data directory, and one HTTP server
// serving /mcp, /v1/tools/{name}, /mcp/tool/{name} and /healthz. It is what
// `make run` starts.
package localserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/mcpserver"
	"github.com/toolshed/toolshed/shared/oauth"
	"github.com/toolshed/toolshed/shared/ratelimit"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/toolset"
	"github.com/toolshed/toolshed/shared/wiring"
	"github.com/toolshed/toolshed/shared/wiring/embedded"
)

// Server is a built local server, ready to serve.
type Server struct {
	Handler http.Handler
	AuthOn  bool
	close   func() error
}

// Close waits for the tools' background work and releases the storage.
func (s *Server) Close() error { return s.close() }

// Build assembles the handler for cfg. loopback says whether the listener is
// on a loopback address, which decides whether auth may be off.
func Build(ctx context.Context, cfg config.Config, log *slog.Logger, version string, loopback bool) (*Server, error) {
	env := wiring.NewEnv(cfg, log)
	if err := embedded.Use(env); err != nil {
		return nil, err
	}
	s, err := build(ctx, env, version, loopback)
	if err != nil {
		env.Close()
		return nil, err
	}
	s.close = env.Close
	return s, nil
}

func build(ctx context.Context, env *wiring.Env, version string, loopback bool) (*Server, error) {
	cfg, log := env.Config, env.Log
	stores, err := env.Stores(ctx)
	if err != nil {
		return nil, err
	}
	if err := keepPreciseIndexes(ctx, env); err != nil {
		return nil, err
	}
	tools, err := family.Build(ctx, toolset.Families, env)
	if err != nil {
		return nil, err
	}
	p, err := wiring.Pipeline(tools, wiring.PipelineOptions{
		Limiter:    ratelimit.New(localCounters(cfg, stores), nil),
		RateLimits: cfg.RateLimits,
		Log:        log,
	})
	if err != nil {
		return nil, err
	}
	srv := mcpserver.New(mcpserver.Config{Name: "toolshed", Version: version, Tools: p, Log: log})
	hc := httpapi.Config{Invoker: p, MCP: srv, ServerCard: srv.Card, PublicURL: cfg.PublicURL, Status: env.Status, Log: log}
	authOn, err := oauth.Protect(ctx, &hc, cfg, env, p.Served())
	if err == nil && !authOn {
		hc.Auth, authOn, err = authenticator(ctx, cfg, stores, loopback)
	}
	if err != nil {
		return nil, err
	}
	if loopback {
		hc.Guard = &httpapi.OriginGuard{Origins: cfg.Origins}
	}
	return &Server{Handler: httpapi.New(hc), AuthOn: authOn}, nil
}

// localCounters are the rate counters of the local server: in memory when
// the server owns its embedded store (exact, and no durable write per
// call; a restart only resets the current windows), in the store when it
// shares DynamoDB with others.
func localCounters(cfg config.Config, stores store.Stores) store.Counters {
	if cfg.Store == config.StoreBolt {
		return ratelimit.NewMemoryCounters(nil)
	}
	return stores.Counters
}

// authenticator picks the auth mode. TOOLSHED_AUTH=keys always requires
// keys; off never does (loopback only); auto requires them while any
// unrevoked key exists, so revoking or deleting the last key cannot lock
// the owner out. Off loopback, keys are always required.
func authenticator(ctx context.Context, cfg config.Config, stores store.Stores, loopback bool) (httpapi.Authenticator, bool, error) {
	keysOn := auth.Keys{Store: stores.APIKeys}
	switch {
	case cfg.Auth == config.AuthOff && !loopback:
		return nil, false, fmt.Errorf("%s=%s is only allowed on a loopback address: listen on 127.0.0.1 or use API keys", config.Auth.Name(), config.AuthOff)
	case cfg.Auth == config.AuthOff:
		return auth.Fixed{Tenant: cfg.LocalTenant}, false, nil
	case cfg.Auth == config.AuthKeys:
		return keysOn, true, nil
	}
	keys, err := stores.APIKeys.List(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("list API keys: %w", err)
	}
	if slices.ContainsFunc(keys, func(k store.APIKey) bool { return !k.Revoked }) {
		return keysOn, true, nil
	}
	if !loopback {
		return nil, false, errors.New("refusing to serve without API keys on a non-loopback address: create a key (go run ./scripts/apikeys create) or listen on 127.0.0.1")
	}
	return auth.Fixed{Tenant: cfg.LocalTenant}, false, nil
}

// Run listens on cfg.Addr and serves until ctx is cancelled, then shuts
// down gracefully, letting requests in flight finish (up to 10 s).
func Run(ctx context.Context, cfg config.Config, log *slog.Logger, version string) error {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	return Serve(ctx, ln, cfg, log, version)
}

// Serve is Run on an existing listener (tests pass a free port).
func Serve(ctx context.Context, ln net.Listener, cfg config.Config, log *slog.Logger, version string) error {
	loopback := IsLoopback(ln.Addr())
	if cfg.PublicURL == "" {
		cfg.PublicURL = "http://" + ln.Addr().String()
	}
	s, err := Build(ctx, cfg, log, version, loopback)
	if err != nil {
		ln.Close()
		return err
	}
	defer s.Close()
	hs := &http.Server{
		Handler:           s.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(httpapi.Listener(ln, s.Handler)) }()
	repository, data := serving(cfg)
	log.Info("toolshed listening", "addr", ln.Addr().String(), "mcp", "http://"+ln.Addr().String()+"/mcp",
		"version", version, "repository", repository, "data", data,
		"auth", map[bool]string{true: "api keys", false: "off (loopback)"}[s.AuthOn], "oauth_issuer", cfg.OAuth.Issuer, "store", cfg.Store)
	if missing := symbols.Missing(); len(missing) > 0 {
		log.Warn(goSymbolsOnly, "languages_without_symbols", missing)
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// goSymbolsOnly is the start-up warning of a binary built without cgo:
// `go build` leaves cgo out by itself when there is no C compiler, and
// tree-sitter, which reads every language but Go, is C. find_symbols'
// answers say it too (their unsupported files and their reason).
const goSymbolsOnly = "find_symbols reads Go only: this binary was built without cgo (no C compiler); " +
	"install gcc (apt-get install gcc) and run make run again for the symbols of the other languages"

// serving names what the server serves, for its start-up line: the
// repository (a directory, or the snapshots in the bucket) and the data
// directory, as absolute paths.
func serving(cfg config.Config) (repository, data string) {
	repository = "s3://" + cfg.Bucket + "/" + repo.Prefix
	if cfg.Bucket == "" {
		dirs, _ := repo.LocalRepos(cfg.Repos) // the wiring refused bad ones
		names := make([]string, len(dirs))
		for i, d := range dirs {
			names[i] = d.Name + "=" + absolute(d.Dir)
		}
		repository = strings.Join(names, ", ")
	}
	return repository, absolute(cfg.DataDir)
}

// absolute is dir as an absolute path, or as given if it has none.
func absolute(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// IsLoopback reports whether addr is a loopback TCP address.
func IsLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
