package sysaudit

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Hardware is the result of list_hardware.
type Hardware struct {
	CPU   CPU    `json:"cpu"`
	GPUs  []GPU  `json:"gpus"`
	RAM   RAM    `json:"ram_gb"`
	Disks []Disk `json:"disks"`
	OS    string `json:"os"`
	Arch  string `json:"arch"`
}

// CPU describes the processors. Model is omitted when /proc/cpuinfo does not
// name it (most arm64 kernels); FrequencyMHz is nil when unknown.
type CPU struct {
	Model        string   `json:"model,omitempty"`
	Cores        int      `json:"cores"`
	Threads      int      `json:"threads"`
	FrequencyMHz *float64 `json:"frequency_mhz"`
}

// GPU is one NVIDIA GPU. VRAMGB and DriverVersion are nil when unknown
// (the kernel driver's /proc files do not report memory size).
type GPU struct {
	Name          string   `json:"name"`
	VRAMGB        *float64 `json:"vram_gb"`
	DriverVersion *string  `json:"driver_version"`
}

// RAM is memory in decimal GB: Used = MemTotal - MemAvailable, Free =
// MemAvailable. All three are 0 when /proc/meminfo cannot be read.
type RAM struct {
	Total float64 `json:"total"`
	Used  float64 `json:"used"`
	Free  float64 `json:"free"`
}

// Disk is one mounted real file system, sizes in decimal GB.
type Disk struct {
	Mount  string  `json:"mount"`
	SizeGB float64 `json:"size_gb"`
	UsedGB float64 `json:"used_gb"`
}

// Files read by list_hardware, relative to the root file system.
const (
	cpuinfoFile      = "proc/cpuinfo"
	cpuMaxFreqFile   = "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"
	meminfoFile      = "proc/meminfo"
	mountsFile       = "proc/mounts"
	nvidiaVersion    = "proc/driver/nvidia/version"
	nvidiaGPUPattern = "proc/driver/nvidia/gpus/*/information"
)

// hardware runs list_hardware.
func (a *auditor) hardware(ctx context.Context) (Hardware, error) {
	hw := Hardware{OS: a.src.Runtime.GOOS, Arch: a.src.Runtime.GOARCH}
	hw.CPU = a.cpu()
	hw.GPUs = a.gpus()
	hw.RAM = a.ram()
	if err := ctx.Err(); err != nil {
		return Hardware{}, err
	}
	disks, err := a.disks(ctx)
	if err != nil {
		return Hardware{}, err
	}
	hw.Disks = disks
	return hw, nil
}

// ---- CPU ----

// cpu reads /proc/cpuinfo and the cpufreq files.
func (a *auditor) cpu() CPU {
	var c CPU
	var procs []map[string]string
	var global map[string]string
	if data, err := a.readFile(cpuinfoFile); err == nil {
		procs, global = parseCPUInfo(data)
	}

	c.Threads = len(procs)
	if c.Threads == 0 {
		// No /proc/cpuinfo (macOS, a sandbox): the Go runtime's count is
		// still a real number of logical CPUs.
		c.Threads = a.src.Runtime.NumCPU
	}
	c.Cores = physicalCores(procs)
	if c.Cores == 0 {
		c.Cores = c.Threads
	}
	c.Model = cpuModel(procs, global)
	c.FrequencyMHz = a.cpuFrequency(procs)
	return c
}

// parseCPUInfo splits /proc/cpuinfo into one map per "processor" entry.
// Lines outside an entry (e.g. "Hardware" on 32-bit ARM, after a blank
// line) go to global.
func parseCPUInfo(data []byte) (procs []map[string]string, global map[string]string) {
	global = map[string]string{}
	current := global
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024) // "flags" lines are long
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			current = global
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if key == "processor" {
			current = map[string]string{}
			procs = append(procs, current)
		}
		current[key] = value
	}
	return procs, global
}

// physicalCores counts unique (physical id, core id) pairs; 0 when the
// kernel does not report them (arm64).
func physicalCores(procs []map[string]string) int {
	seen := map[string]bool{}
	for _, p := range procs {
		socket, okSocket := p["physical id"]
		core, okCore := p["core id"]
		if okSocket && okCore {
			seen[socket+"/"+core] = true
		}
	}
	return len(seen)
}

// cpuModel returns the processor name, or "" when cpuinfo has none.
func cpuModel(procs []map[string]string, global map[string]string) string {
	keys := []string{"model name", "cpu model", "cpu", "Processor"}
	var sources []map[string]string
	if len(procs) > 0 {
		sources = append(sources, procs[0])
	}
	sources = append(sources, global)
	for _, key := range keys {
		for _, m := range sources {
			if v := m[key]; v != "" {
				return v
			}
		}
	}
	return ""
}

// cpuFrequency is the maximum frequency of cpu0 from cpufreq, else the
// "cpu MHz" of the first processor, else nil.
func (a *auditor) cpuFrequency(procs []map[string]string) *float64 {
	if data, err := a.readFile(cpuMaxFreqFile); err == nil {
		if khz, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64); err == nil && khz > 0 {
			return ptr(round2(khz / 1000))
		}
	}
	for _, p := range procs {
		if mhz, err := strconv.ParseFloat(p["cpu MHz"], 64); err == nil && mhz > 0 {
			return ptr(round2(mhz))
		}
	}
	return nil
}

// ---- GPUs ----

var driverVersionPattern = regexp.MustCompile(`^\d+\.\d+(\.\d+)*$`)

// gpus lists NVIDIA GPUs known to the kernel driver; [] when there are none.
func (a *auditor) gpus() []GPU {
	gpus := []GPU{}
	if a.src.Root == nil {
		return gpus
	}
	files, err := fs.Glob(a.src.Root, nvidiaGPUPattern)
	if err != nil || len(files) == 0 {
		return gpus
	}
	driver := a.nvidiaDriverVersion()
	for _, f := range files { // fs.Glob sorts, so GPUs come in bus order
		data, err := a.readFile(f)
		if err != nil {
			continue
		}
		name := keyValue(data, "Model")
		if name == "" {
			continue
		}
		gpus = append(gpus, GPU{Name: name, DriverVersion: driver})
	}
	return gpus
}

// nvidiaDriverVersion reads the version from a line such as
// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ...".
func (a *auditor) nvidiaDriverVersion() *string {
	data, err := a.readFile(nvidiaVersion)
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "NVRM version:") {
			continue
		}
		for _, field := range strings.Fields(line) {
			if driverVersionPattern.MatchString(field) {
				return ptr(field)
			}
		}
	}
	return nil
}

// keyValue returns the value of the first "key: value" line, or "".
func keyValue(data []byte, key string) string {
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// ---- RAM ----

// ram reads /proc/meminfo.
func (a *auditor) ram() RAM {
	data, err := a.readFile(meminfoFile)
	if err != nil {
		return RAM{}
	}
	info := parseMeminfo(data)
	total, ok := info["MemTotal"]
	if !ok {
		return RAM{}
	}
	available, ok := info["MemAvailable"]
	if !ok {
		// Kernels before 3.14 have no MemAvailable; MemFree is the
		// closest figure they report.
		available = info["MemFree"]
	}
	available = min(available, total)
	return RAM{
		Total: gigabytes(total),
		Used:  gigabytes(total - available),
		Free:  gigabytes(available),
	}
}

// parseMeminfo returns the fields of /proc/meminfo in bytes ("kB" there
// means KiB).
func parseMeminfo(data []byte) map[string]uint64 {
	info := map[string]uint64{}
	for _, line := range strings.Split(string(data), "\n") {
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 && fields[1] == "kB" {
			n *= 1024
		}
		info[strings.TrimSpace(key)] = n
	}
	return info
}

// ---- Disks ----

// pseudoFS are file system types that hold no disk space of their own.
var pseudoFS = map[string]bool{
	"autofs": true, "binfmt_misc": true, "bpf": true, "cgroup": true, "cgroup2": true,
	"configfs": true, "debugfs": true, "devpts": true, "devtmpfs": true, "efivarfs": true,
	"fusectl": true, "hugetlbfs": true, "mqueue": true, "nsfs": true, "proc": true,
	"pstore": true, "ramfs": true, "rpc_pipefs": true, "securityfs": true, "selinuxfs": true,
	"squashfs": true, "sysfs": true, "tmpfs": true, "tracefs": true, "fuse.lxcfs": true,
	"fuse.gvfsd-fuse": true, "fuse.portal": true, "iso9660": true, "nfsd": true,
}

// mount is one line of /proc/mounts.
type mount struct {
	point  string
	fsType string
}

// disks lists the real file systems of /proc/mounts with their sizes,
// sorted by mount point. Mounts whose size cannot be read are left out.
func (a *auditor) disks(ctx context.Context) ([]Disk, error) {
	disks := []Disk{}
	data, err := a.readFile(mountsFile)
	if err != nil || a.src.Statfs == nil {
		return disks, nil
	}
	for _, m := range realMounts(parseMounts(data)) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if a.isFileMount(m.point) {
			continue // a bind-mounted file such as /etc/hosts in a container
		}
		size, used, err := a.src.Statfs(m.point)
		if err != nil || size == 0 {
			continue
		}
		disks = append(disks, Disk{Mount: m.point, SizeGB: gigabytes(size), UsedGB: gigabytes(used)})
	}
	return disks, nil
}

// parseMounts reads /proc/mounts: "device mountpoint fstype options 0 0".
func parseMounts(data []byte) []mount {
	var mounts []mount
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 3 {
			continue
		}
		mounts = append(mounts, mount{point: unescapeMount(fields[1]), fsType: fields[2]})
	}
	return mounts
}

// realMounts drops pseudo file systems, keeps the last mount of each mount
// point (it hides the earlier ones) and sorts by mount point. Overlay is
// kept only for "/" (a container's root); other overlays are container
// layers.
func realMounts(mounts []mount) []mount {
	byPoint := map[string]mount{}
	for _, m := range mounts {
		if pseudoFS[m.fsType] || strings.HasPrefix(m.fsType, "cgroup") {
			delete(byPoint, m.point)
			continue
		}
		if m.fsType == "overlay" && m.point != "/" {
			delete(byPoint, m.point)
			continue
		}
		byPoint[m.point] = m
	}
	out := make([]mount, 0, len(byPoint))
	for _, m := range byPoint {
		out = append(out, m)
	}
	slices.SortFunc(out, func(x, y mount) int { return strings.Compare(x.point, y.point) })
	return out
}

// unescapeMount decodes the octal escapes /proc/mounts uses for spaces,
// tabs, newlines and backslashes in paths ("\040" is a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isFileMount reports whether the mount point is known to be a regular
// file. When it cannot be checked, it is treated as a directory.
func (a *auditor) isFileMount(point string) bool {
	if a.src.Root == nil {
		return false
	}
	name := strings.TrimPrefix(path.Clean(point), "/")
	if name == "" {
		return false
	}
	info, err := fs.Stat(a.src.Root, name)
	return err == nil && !info.IsDir()
}

// ---- helpers ----

// gigabytes converts bytes to decimal GB rounded to two decimals.
func gigabytes(bytes uint64) float64 {
	return round2(float64(bytes) / 1e9)
}

func round2(x float64) float64 {
	return math.Round(x*100) / 100
}

func ptr[T any](v T) *T { return &v }
