// Command echo is the bootstrap lambdatest's own tests run: a Go function on
// the real aws-lambda-go runtime client whose event says what to do.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type event struct {
	Echo    json.RawMessage `json:"echo"`
	Fail    string          `json:"fail"`
	Panic   string          `json:"panic"`
	SleepMs int             `json:"sleepMs"`
	SpinMs  int             `json:"spinMs"`
	Big     int             `json:"big"`
	Context bool            `json:"context"`
	// AllocMB allocates and touches that many MB, and keeps them.
	AllocMB int `json:"allocMB"`
	// Count starts ("start") or reads ("read") a goroutine that counts
	// milliseconds on its own, between invocations too unless frozen.
	Count string `json:"count"`
	// Run runs the program of that name, found on PATH, and returns what
	// it printed with the PATH and LD_LIBRARY_PATH it ran with.
	Run string `json:"run"`
	// Records is an SQS event: a record whose body is "fail" is reported
	// failed, "crash" ends the process, "sleep" sleeps a second.
	Records []events.SQSMessage `json:"Records"`
}

// invocationContext is what the runtime client tells the handler.
type invocationContext struct {
	RequestID    string `json:"requestId"`
	FunctionArn  string `json:"functionArn"`
	DeadlineMs   int64  `json:"deadlineMs"`
	TraceID      string `json:"traceId"`
	FunctionName string `json:"functionName"`
	MemoryMB     int    `json:"memoryMB"`
	Region       string `json:"region"`
	Custom       string `json:"custom"`
}

// kept holds what AllocMB allocated.
var kept [][]byte

func handle(ctx context.Context, ev event) (any, error) {
	switch {
	case ev.AllocMB > 0:
		b := make([]byte, ev.AllocMB<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		kept = append(kept, b)
		return "allocated", nil
	case ev.Count != "":
		return count(ev.Count), nil
	case len(ev.Records) > 0:
		return sqsBatch(ev.Records), nil
	case ev.SpinMs > 0:
		start := time.Now()
		spin(time.Duration(ev.SpinMs) * time.Millisecond)
		return map[string]int64{"wallMs": time.Since(start).Milliseconds()}, nil
	case ev.Fail != "":
		return nil, errors.New(ev.Fail)
	case ev.Panic != "":
		panic(ev.Panic)
	case ev.SleepMs > 0:
		time.Sleep(time.Duration(ev.SleepMs) * time.Millisecond)
		return "slept", nil
	case ev.Big > 0:
		return strings.Repeat("x", ev.Big), nil
	case ev.Run != "":
		out, err := exec.Command(ev.Run).Output()
		if err != nil {
			return nil, err
		}
		return map[string]string{"output": string(out), "path": os.Getenv("PATH"), "ldLibraryPath": os.Getenv("LD_LIBRARY_PATH")}, nil
	case ev.Context:
		lc, _ := lambdacontext.FromContext(ctx)
		deadline, _ := ctx.Deadline()
		return invocationContext{
			RequestID:    lc.AwsRequestID,
			FunctionArn:  lc.InvokedFunctionArn,
			DeadlineMs:   deadline.UnixMilli(),
			TraceID:      os.Getenv("_X_AMZN_TRACE_ID"),
			FunctionName: lambdacontext.FunctionName,
			MemoryMB:     lambdacontext.MemoryLimitInMB,
			Region:       os.Getenv("AWS_REGION"),
			Custom:       os.Getenv("ECHO_CUSTOM"),
		}, nil
	default:
		return ev.Echo, nil
	}
}

func main() {
	if os.Getenv("ECHO_EXIT_AT_INIT") != "" {
		os.Exit(3)
	}
	slowInit()
	lambda.Start(handle)
}

// slowInit sleeps ECHO_INIT_SLEEP_MS in the init, or, with
// ECHO_INIT_SLOW_ONCE naming a file, only in the init that creates it (a
// retried init then is quick, as one that finds its caches warm).
func slowInit() {
	ms, _ := strconv.Atoi(os.Getenv("ECHO_INIT_SLEEP_MS"))
	if once := os.Getenv("ECHO_INIT_SLOW_ONCE"); once != "" {
		if _, err := os.Stat(once); err == nil {
			return
		}
		_ = os.WriteFile(once, nil, 0o644)
	}
	time.Sleep(time.Duration(ms) * time.Millisecond)
}

// ticks is what the counting goroutine counted; atReturn its value when
// the last counting invocation returned.
var ticks, atReturn atomic.Int64

// count starts the counting goroutine, or reads it: the ticks now, at the
// start of this invocation, and when the last one returned.
func count(what string) map[string]int64 {
	if what == "start" {
		go func() {
			for range time.Tick(time.Millisecond) {
				ticks.Add(1)
			}
		}()
	}
	now := ticks.Load()
	out := map[string]int64{"now": now, "atLastReturn": atReturn.Load()}
	atReturn.Store(ticks.Load())
	return out
}

// sqsBatch handles an SQS event's records by their bodies.
func sqsBatch(records []events.SQSMessage) events.SQSEventResponse {
	var resp events.SQSEventResponse
	for _, r := range records {
		switch r.Body {
		case "fail":
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		case "crash":
			os.Exit(2)
		case "sleep":
			time.Sleep(time.Second)
		}
	}
	return resp
}

// spin burns d of the process's CPU time.
func spin(d time.Duration) {
	used := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	until := used() + d
	for x := 0; used() < until; x++ {
		for i := 0; i < 100000; i++ {
			x ^= i
		}
	}
}
