// Package lambdaentry starts a function in the AWS Lambda runtime: the GC
// settings, configuration, logger and secret settings of its process
// (Setup, Begin), where its metrics go, and the end of a function that
// cannot start, reported as the runtime's init error (FatalIf). The events
// it then answers are shared/lambdaevent's.
package lambdaentry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/toolshed/toolshed/shared/awscall"
	"github.com/toolshed/toolshed/shared/cmdline"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/gcsettings"
	"github.com/toolshed/toolshed/shared/secrets"
	"github.com/toolshed/toolshed/shared/telemetry"
)

// InitWarmTime is how long a function's init lets its warm-ups run
// (wiring.Env.WaitWarm): Lambda ends an init that runs past 10 s (at the
// function's CPU share), and the rest of the init needs a little of it;
// what the warm-ups have not done by then the first calls do.
const InitWarmTime = 8 * time.Second

// WarmTime is how long the init of a function serving tools with these
// deadlines lets its warm-ups run: InitWarmTime, but no more than half
// the shortest deadline, since a cold call costs the init and the first
// call together and should answer within the call's deadline; the first
// calls go on with what the init left, each saying how far it is.
func WarmTime(deadlines ...time.Duration) time.Duration {
	warm := InitWarmTime
	for _, d := range deadlines {
		if d > 0 {
			warm = min(warm, d/2)
		}
	}
	return warm
}

// SecretSource is where a function reads its secret settings' values
// from (parameterstore.Fetch); nil for a function that has none, which
// then does not link the client that reads them.
type SecretSource func(aws.Config) secrets.Fetch

// Setup begins every function's main: the GC settings for the function's
// memory, the configuration, the JSON logger, and the getenv the tools
// read their settings with: the environment with the secret settings the
// deployment named (shared/secrets), read from source, laid over it. A
// configuration that cannot be read, or a secret that cannot, ends the
// process (FatalIf).
func Setup(source SecretSource) (*slog.Logger, config.Config, func(string) string) {
	gcsettings.Apply(os.Getenv)
	cfg, err := config.Load()
	log := telemetry.NewLogger(os.Stdout, cfg.LogLevel)
	FatalIf(log, "configuration", err)
	getenv, err := loadSecrets(context.Background(), source)
	FatalIf(log, "secret settings", err)
	return log, cfg, getenv
}

// Begin is Setup for the main of a binary that only ever runs as a Lambda
// function (tool, authorizer, indexer): first its command line, run by
// hand, answers -version and -h (naming docs/deploy.md), with summary
// saying what the function is.
func Begin(name, version, summary string, source SecretSource) (*slog.Logger, config.Config, func(string) string) {
	cmdline.Command{Name: name, Version: version, Readme: "docs/deploy.md",
		Summary: summary + "; run by Lambda, it takes its settings from the environment"}.Parse()
	return Setup(source)
}

// loadSecrets reads the secret settings from source and lays them over
// os.Getenv; it loads the AWS configuration only when there are any.
func loadSecrets(ctx context.Context, source SecretSource) (func(string) string, error) {
	if os.Getenv(secrets.EnvVar) == "" {
		return os.Getenv, nil
	}
	if source == nil {
		return nil, fmt.Errorf("%s is set, but this function reads no secret settings", secrets.EnvVar)
	}
	awsCfg, err := awscall.LoadConfig(ctx)
	if err != nil {
		return nil, err
	}
	return secrets.Load(ctx, os.Getenv, source(awsCfg))
}

// Metrics is where a function writes its EMF metrics: stdout when
// TOOLSHED_METRICS is on (the default in Lambda), else nowhere.
func Metrics(cfg config.Config) io.Writer {
	if cfg.Metrics {
		return os.Stdout
	}
	return nil
}

// FatalIf ends a function that cannot start: it logs why, reports it to
// the Runtime API as the init error when running in Lambda, and exits.
func FatalIf(log *slog.Logger, what string, err error) {
	if err == nil {
		return
	}
	err = fmt.Errorf("%s: %w", what, err)
	log.Error(err.Error())
	if api := os.Getenv("AWS_LAMBDA_RUNTIME_API"); api != "" {
		if rerr := reportInitError(context.Background(), api, err); rerr != nil {
			log.Error(rerr.Error())
		}
	}
	os.Exit(1)
}
