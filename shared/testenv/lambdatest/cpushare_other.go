//go:build !linux

package lambdatest

import "errors"

// cpuShare throttles processes on Linux only.
type cpuShare struct{}

func newCPUShare(string, float64) (*cpuShare, error) {
	return nil, errors.New("lambdatest: a CPU share needs Linux cgroups")
}

func (c *cpuShare) add(int) error { return nil }

func (c *cpuShare) remove() {}
