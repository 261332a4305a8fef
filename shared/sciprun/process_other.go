//go:build !linux

package sciprun

import (
	"context"
	"errors"
	"os/exec"
)

// runLimited runs argv, killed when ctx ends. Off Linux no limit but time
// holds: the memory of node is held by its heap limit alone, the Go
// indexer's by nothing, and the output's size is checked after; only the
// indexer itself is killed, not what it started; nice is not applied.
func runLimited(ctx context.Context, argv, env []string, dir string, l Limits, _ int, rlimitAS bool) (result, error) {
	log := &tail{}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, log, log
	waitErr := cmd.Run()
	if cmd.ProcessState == nil {
		return result{}, errors.Join(errors.New("the indexer did not run"), waitErr)
	}
	memory := "V8 heap limit"
	if rlimitAS {
		memory = "none"
	}
	return result{success: cmd.ProcessState.Success(), exit: cmd.ProcessState.String(),
		output: log.String(), memory: memory}, nil
}
