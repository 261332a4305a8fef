//go:build !linux

package proclimit

import "errors"

// Spec says what a Group holds its processes to.
type Spec struct {
	Name        string
	MemoryBytes int64
	CPU         bool
	Freezer     bool
}

// Group is a cgroup; there are none off Linux.
type Group struct{}

var errNoCgroups = errors.New("proclimit: cgroups are Linux's")

// New fails off Linux.
func New(Spec) (*Group, error) { return nil, errNoCgroups }

func (g *Group) Kind() string               { return "" }
func (g *Group) Add(int) error              { return errNoCgroups }
func (g *Group) SetCPU(float64) error       { return errNoCgroups }
func (g *Group) Freeze() error              { return errNoCgroups }
func (g *Group) Thaw() error                { return errNoCgroups }
func (g *Group) OOMKilled() bool            { return false }
func (g *Group) KillAll()                   {}
func (g *Group) PeakMemory() (int64, error) { return 0, errNoCgroups }
func (g *Group) Remove()                    {}

// LimitAddressSpace fails off Linux.
func LimitAddressSpace(int, int64) error { return errNoCgroups }
