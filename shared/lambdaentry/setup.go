package lambdaentry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/gcsettings"
	"github.com/toolshed/toolshed/shared/telemetry"
)

// InLambda reports whether the process runs inside the Lambda runtime.
func InLambda() bool { return os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" }

// Setup begins every function's main: the GC settings for the function's
// memory, the configuration and the JSON logger. A configuration that
// cannot be read ends the process (FatalIf).
func Setup() (*slog.Logger, config.Config) {
	gcsettings.Apply(os.Getenv)
	cfg, err := config.Load()
	log := telemetry.NewLogger(os.Stdout, cfg.LogLevel)
	FatalIf(log, "configuration", err)
	return log, cfg
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
