// Package proclimit holds a child process, and whatever it starts, to
// limits: a memory limit, a share of one CPU, and freezing. Lambda holds
// a function's execution environment to its memory setting, the CPU that
// memory buys, and freezes it between invocations; an indexer run is held
// to its memory limit. Both use a cgroup made below this process's own
// (Group: v1's memory, cpu and freezer controllers, or v2's unified
// hierarchy, memory.max, cpu.max and cgroup.freeze). Where this machine
// allows no cgroup, LimitAddressSpace holds a Go program's memory by
// RLIMIT_AS instead, less exactly.
package proclimit
