package sysaudit

import (
	"context"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// Software is the result of list_software.
type Software struct {
	OSVersion     string   `json:"os_version"`
	Kernel        string   `json:"kernel"`
	PythonVersion *string  `json:"python_version"`
	GoVersion     string   `json:"go_version"`
	Packages      []string `json:"packages"`
}

// unknown is reported for a string the contract requires but that could not
// be read.
const unknown = "unknown"

// mainPackageName names this program in the package list.
const mainPackageName = "toolshed"

// Files read by list_software, relative to the root file system. os-release
// is looked up in /etc first, then in /usr/lib (os-release(5)).
var osReleaseFiles = []string{"etc/os-release", "usr/lib/os-release"}

const kernelReleaseFile = "proc/sys/kernel/osrelease"

// software runs list_software.
func (a *auditor) software(ctx context.Context) (Software, error) {
	sw := Software{
		OSVersion: a.osVersion(),
		Kernel:    a.kernel(ctx),
		GoVersion: a.src.Runtime.GoVersion,
		Packages:  a.packages(),
	}
	if sw.GoVersion == "" {
		sw.GoVersion = unknown
	}
	if err := ctx.Err(); err != nil {
		return Software{}, err
	}
	if a.src.PythonVersion != nil {
		sw.PythonVersion = a.src.PythonVersion(ctx)
	}
	if err := ctx.Err(); err != nil {
		return Software{}, err
	}
	return sw, nil
}

// osVersion is PRETTY_NAME of os-release, else "NAME VERSION", else
// "unknown".
func (a *auditor) osVersion() string {
	for _, name := range osReleaseFiles {
		data, err := a.readFile(name)
		if err != nil {
			continue
		}
		fields := parseOSRelease(string(data))
		if v := fields["PRETTY_NAME"]; v != "" {
			return v
		}
		if v := strings.TrimSpace(fields["NAME"] + " " + fields["VERSION"]); v != "" {
			return v
		}
	}
	return unknown
}

// parseOSRelease reads KEY=value lines; values may be quoted with " or '.
func parseOSRelease(text string) map[string]string {
	fields := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		fields[key] = unquote(value)
	}
	return fields
}

// unquote removes shell-style quotes from an os-release value.
func unquote(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		if s, err := strconv.Unquote(v); err == nil {
			return s
		}
		return v[1 : len(v)-1]
	}
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return v[1 : len(v)-1]
	}
	return v
}

// kernel is /proc/sys/kernel/osrelease, else what Uname says, else
// "unknown".
func (a *auditor) kernel(ctx context.Context) string {
	if data, err := a.readFile(kernelReleaseFile); err == nil {
		if v := strings.TrimSpace(string(data)); v != "" {
			return v
		}
	}
	if a.src.Uname != nil {
		if v, err := a.src.Uname(ctx); err == nil && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return unknown
}

// packages lists "toolshed==<version>" followed by every module built into
// the binary as "module==version", sorted. A replaced module reports the
// replacement's version when it has one. Without build information the list
// is empty.
func (a *auditor) packages() []string {
	packages := []string{}
	if a.src.BuildInfo == nil {
		return packages
	}
	info, ok := a.src.BuildInfo()
	if !ok || info == nil {
		return packages
	}
	mainVersion := info.Main.Version
	if mainVersion == "" {
		mainVersion = "(devel)"
	}
	var deps []string
	for _, dep := range info.Deps {
		if dep == nil || dep.Path == "" {
			continue
		}
		deps = append(deps, dep.Path+"=="+moduleVersion(dep))
	}
	slices.Sort(deps)
	deps = slices.Compact(deps)
	packages = append(packages, mainPackageName+"=="+mainVersion)
	return append(packages, deps...)
}

func moduleVersion(m *debug.Module) string {
	if m.Replace != nil && m.Replace.Version != "" {
		return m.Replace.Version
	}
	if m.Version == "" {
		return "(devel)"
	}
	return m.Version
}

// parsePythonVersion turns "Python 3.11.4" into "3.11.4"; nil when the text
// is not a python version line.
func parsePythonVersion(output string) *string {
	fields := strings.Fields(output)
	if len(fields) < 2 || fields[0] != "Python" {
		return nil
	}
	v := fields[1]
	if v == "" || v[0] < '0' || v[0] > '9' {
		return nil
	}
	return &v
}
