package sysaudit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// ---- fixtures ----

// testdata reads a fixture file.
func testdata(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// fixture is a machine made of testdata: a 2-socket x86 server with
// hyperthreads, 16 GB of RAM, Ubuntu 22.04, no GPU.
type fixture struct {
	files  fstest.MapFS
	sizes  map[string][2]uint64 // mount point → size, used bytes
	python *string
	build  *debug.BuildInfo
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return &fixture{
		files: fstest.MapFS{
			"proc/cpuinfo":              {Data: []byte(testdata(t, "cpuinfo_x86_2socket_ht"))},
			"proc/meminfo":              {Data: []byte(testdata(t, "meminfo"))},
			"proc/mounts":               {Data: []byte(testdata(t, "mounts"))},
			"proc/sys/kernel/osrelease": {Data: []byte("5.15.0-78-generic\n")},
			"etc/os-release":            {Data: []byte(testdata(t, "os-release"))},
			"etc/hosts":                 {Data: []byte("127.0.0.1 localhost\n")},
			"data/README":               {Data: []byte("a directory on its own disk")},
		},
		sizes: map[string][2]uint64{
			"/":            {502_468_108_288, 123_456_789_012},
			"/boot/efi":    {535_805_952, 6_373_376},
			"/data":        {2_000_398_934_016, 1_000_000_000},
			"/mnt/My Data": {4_000_787_030_016, 0},
			"/etc/hosts":   {502_468_108_288, 123_456_789_012},
		},
		python: ptr("3.11.4"),
		build: &debug.BuildInfo{
			GoVersion: "go1.26.8",
			Main:      debug.Module{Path: "github.com/toolshed/toolshed", Version: "v0.3.0"},
			Deps: []*debug.Module{
				{Path: "github.com/santhosh-tekuri/jsonschema/v5", Version: "v5.3.1"},
				{Path: "github.com/aws/aws-lambda-go", Version: "v1.55.1"},
				{Path: "example.com/forked", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.2.4"}},
			},
		},
	}
}

func (f *fixture) addNvidiaGPU(t *testing.T, busID string) {
	f.files["proc/driver/nvidia/version"] = &fstest.MapFile{Data: []byte(testdata(t, "nvidia_version"))}
	f.files["proc/driver/nvidia/gpus/"+busID+"/information"] = &fstest.MapFile{Data: []byte(testdata(t, "nvidia_information"))}
}

func (f *fixture) source() Source {
	return Source{
		Root: f.files,
		Statfs: func(path string) (uint64, uint64, error) {
			s, ok := f.sizes[path]
			if !ok {
				return 0, 0, errors.New("statfs " + path + ": no such file or directory")
			}
			return s[0], s[1], nil
		},
		Uname:         func(context.Context) (string, error) { return "", errors.New("uname: not in this fixture") },
		PythonVersion: func(context.Context) *string { return f.python },
		BuildInfo:     func() (*debug.BuildInfo, bool) { return f.build, f.build != nil },
		Runtime:       Runtime{GOOS: "linux", GOARCH: "amd64", GoVersion: "go1.26.8", NumCPU: 8},
	}
}

// ---- helpers ----

// contractSet loads only the sys-audit contract from contracts.FS, so these
// tests do not depend on other tools' contracts.
func contractSet(t *testing.T) *schema.Set {
	t.Helper()
	raw, err := contracts.FS.ReadFile("sys-audit.json")
	if err != nil {
		t.Fatal(err)
	}
	set, err := schema.Load(fstest.MapFS{"sys-audit.json": {Data: raw}})
	if err != nil {
		t.Fatalf("load contract: %v", err)
	}
	return set
}

// validateOutput checks a result against the contract's outputSchema.
func validateOutput(t *testing.T, data []byte) {
	t.Helper()
	c, ok := contractSet(t).Get(ToolName)
	if !ok {
		t.Fatal("no sys-audit contract")
	}
	if err := c.ValidateOutput(data); err != nil {
		t.Errorf("output does not match the contract: %v\n%s", err, data)
	}
}

// call runs the handler directly and returns the result as JSON, validated
// against the outputSchema.
func call(t *testing.T, src Source, args string) ([]byte, error) {
	t.Helper()
	tool := New(src)
	res, err := tool.Handler(context.Background(), toolkit.Call{Tool: ToolName, Tenant: "t1", Args: json.RawMessage(args)})
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(res.Data)
	if err != nil {
		t.Fatalf("marshal result: %v", err)
	}
	validateOutput(t, data)
	return data, nil
}

// mustCall is call for calls that must succeed, decoding into T.
func mustCall[T any](t *testing.T, src Source, args string) T {
	t.Helper()
	data, err := call(t, src, args)
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return out
}

// sameJSON compares two values by their JSON encoding, which prints well.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func wantInvalidInput(t *testing.T, err error, message string) {
	t.Helper()
	var te *toolerr.Error
	if !errors.As(err, &te) || te.Code != toolerr.InvalidInput {
		t.Fatalf("error = %v, want INVALID_INPUT", err)
	}
	if !strings.Contains(te.Message, message) {
		t.Errorf("message = %q, want it to contain %q", te.Message, message)
	}
	fields, _ := te.Details["errors"].([]toolerr.FieldError)
	if len(fields) != 1 || !strings.HasPrefix(te.Message, fields[0].Field+": ") {
		t.Errorf("details = %v, want errors naming the field of %q", te.Details, te.Message)
	}
}

// ---- list_hardware ----

func TestListHardwareCPU(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fixture)
		want  CPU
	}{
		{
			name: "x86 two sockets with hyperthreads",
			want: CPU{Model: "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", Cores: 4, Threads: 8, FrequencyMHz: ptr(2100.0)},
		},
		{
			name: "cpufreq maximum wins over cpu MHz",
			setup: func(f *fixture) {
				f.files[cpuMaxFreqFile] = &fstest.MapFile{Data: []byte("3900000\n")}
			},
			want: CPU{Model: "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", Cores: 4, Threads: 8, FrequencyMHz: ptr(3900.0)},
		},
		{
			name: "arm64 has no physical id, model or cpu MHz",
			setup: func(f *fixture) {
				f.files["proc/cpuinfo"] = &fstest.MapFile{Data: []byte(testdata(t, "cpuinfo_arm64"))}
			},
			want: CPU{Cores: 4, Threads: 4, FrequencyMHz: nil},
		},
		{
			name: "arm64 with cpufreq",
			setup: func(f *fixture) {
				f.files["proc/cpuinfo"] = &fstest.MapFile{Data: []byte(testdata(t, "cpuinfo_arm64"))}
				f.files[cpuMaxFreqFile] = &fstest.MapFile{Data: []byte("2600000\n")}
			},
			want: CPU{Cores: 4, Threads: 4, FrequencyMHz: ptr(2600.0)},
		},
		{
			name:  "no /proc/cpuinfo falls back to the Go runtime's count",
			setup: func(f *fixture) { delete(f.files, "proc/cpuinfo") },
			want:  CPU{Cores: 8, Threads: 8, FrequencyMHz: nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			hw := mustCall[Hardware](t, f.source(), `{"command":"list_hardware"}`)
			sameJSON(t, "cpu", hw.CPU, tt.want)
		})
	}
}

func TestListHardwareGPUs(t *testing.T) {
	rtx := GPU{Name: "NVIDIA GeForce RTX 3090", VRAMGB: nil, DriverVersion: ptr("535.104.05")}
	tests := []struct {
		name  string
		setup func(f *fixture)
		want  []GPU
	}{
		{name: "no NVIDIA driver", want: []GPU{}},
		{
			name:  "one GPU",
			setup: func(f *fixture) { f.addNvidiaGPU(t, "0000:01:00.0") },
			want:  []GPU{rtx},
		},
		{
			name: "two GPUs",
			setup: func(f *fixture) {
				f.addNvidiaGPU(t, "0000:01:00.0")
				f.addNvidiaGPU(t, "0000:02:00.0")
			},
			want: []GPU{rtx, rtx},
		},
		{
			name: "driver loaded but no GPU",
			setup: func(f *fixture) {
				f.files["proc/driver/nvidia/version"] = &fstest.MapFile{Data: []byte(testdata(t, "nvidia_version"))}
			},
			want: []GPU{},
		},
		{
			name: "unreadable driver version is null",
			setup: func(f *fixture) {
				f.addNvidiaGPU(t, "0000:01:00.0")
				delete(f.files, "proc/driver/nvidia/version")
			},
			want: []GPU{{Name: "NVIDIA GeForce RTX 3090"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			hw := mustCall[Hardware](t, f.source(), `{"command":"list_hardware"}`)
			sameJSON(t, "gpus", hw.GPUs, tt.want)
		})
	}
}

func TestListHardwareRAM(t *testing.T) {
	tests := []struct {
		name    string
		meminfo string // "" removes the file
		want    RAM
	}{
		{
			// 16318256 KiB total, 12207032 KiB available.
			name:    "meminfo",
			meminfo: testdata(t, "meminfo"),
			want:    RAM{Total: 16.71, Used: 4.21, Free: 12.5},
		},
		{
			name:    "old kernel without MemAvailable uses MemFree",
			meminfo: "MemTotal: 2000000 kB\nMemFree: 500000 kB\n",
			want:    RAM{Total: 2.05, Used: 1.54, Free: 0.51},
		},
		{name: "no meminfo", meminfo: "", want: RAM{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.meminfo == "" {
				delete(f.files, "proc/meminfo")
			} else {
				f.files["proc/meminfo"] = &fstest.MapFile{Data: []byte(tt.meminfo)}
			}
			hw := mustCall[Hardware](t, f.source(), `{"command":"list_hardware"}`)
			sameJSON(t, "ram_gb", hw.RAM, tt.want)
		})
	}
}

func TestListHardwareDisks(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fixture)
		want  []Disk
	}{
		{
			// Pseudo file systems, the snap squashfs and a container layer
			// are left out; /data is mounted twice; "\040" is a space.
			name: "host mounts",
			want: []Disk{
				{Mount: "/", SizeGB: 502.47, UsedGB: 123.46},
				{Mount: "/boot/efi", SizeGB: 0.54, UsedGB: 0.01},
				{Mount: "/data", SizeGB: 2000.4, UsedGB: 1},
				{Mount: "/mnt/My Data", SizeGB: 4000.79, UsedGB: 0},
			},
		},
		{
			name: "container: overlay root kept, bind-mounted files and unreadable mounts left out",
			setup: func(f *fixture) {
				f.files["proc/mounts"] = &fstest.MapFile{Data: []byte(
					"overlay / overlay rw,relatime,lowerdir=/l,upperdir=/u,workdir=/w 0 0\n" +
						"proc /proc proc rw 0 0\n" +
						"/dev/vda /etc/hosts ext4 rw,relatime 0 0\n" +
						"/dev/vdb /gone ext4 rw,relatime 0 0\n")}
			},
			want: []Disk{{Mount: "/", SizeGB: 502.47, UsedGB: 123.46}},
		},
		{
			name:  "no /proc/mounts",
			setup: func(f *fixture) { delete(f.files, "proc/mounts") },
			want:  []Disk{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			hw := mustCall[Hardware](t, f.source(), `{"command":"list_hardware"}`)
			sameJSON(t, "disks", hw.Disks, tt.want)
		})
	}
}

func TestListHardwareOS(t *testing.T) {
	hw := mustCall[Hardware](t, newFixture(t).source(), `{"command":"list_hardware"}`)
	if hw.OS != "linux" || hw.Arch != "amd64" {
		t.Errorf("os, arch = %q, %q; want linux, amd64", hw.OS, hw.Arch)
	}
}

func TestEmptySourceDoesNotCrash(t *testing.T) {
	for _, cmd := range []string{"list_hardware", "list_software"} {
		t.Run(cmd, func(t *testing.T) {
			data, err := call(t, Source{}, `{"command":"`+cmd+`"}`)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"list_hardware": `{"cpu":{"cores":0,"threads":0,"frequency_mhz":null},"gpus":[],"ram_gb":{"total":0,"used":0,"free":0},"disks":[],"os":"","arch":""}`,
				"list_software": `{"os_version":"unknown","kernel":"unknown","python_version":null,"go_version":"unknown","packages":[]}`,
			}[cmd]
			if string(data) != want {
				t.Errorf("got  %s\nwant %s", data, want)
			}
		})
	}
}

// ---- list_software ----

func TestListSoftware(t *testing.T) {
	full := Software{
		OSVersion:     "Ubuntu 22.04.3 LTS",
		Kernel:        "5.15.0-78-generic",
		PythonVersion: ptr("3.11.4"),
		GoVersion:     "go1.26.8",
		Packages: []string{
			"toolshed==v0.3.0",
			"example.com/forked==v1.2.4",
			"github.com/aws/aws-lambda-go==v1.55.1",
			"github.com/santhosh-tekuri/jsonschema/v5==v5.3.1",
		},
	}
	with := func(change func(s *Software)) Software {
		s := full
		s.Packages = append([]string(nil), full.Packages...)
		change(&s)
		return s
	}
	tests := []struct {
		name  string
		setup func(f *fixture)
		want  Software
	}{
		{name: "everything readable", want: full},
		{
			name: "os-release without PRETTY_NAME",
			setup: func(f *fixture) {
				f.files["etc/os-release"] = &fstest.MapFile{Data: []byte("NAME='Debian GNU/Linux'\nVERSION=\"12 (bookworm)\"\n")}
			},
			want: with(func(s *Software) { s.OSVersion = "Debian GNU/Linux 12 (bookworm)" }),
		},
		{
			name: "os-release only in /usr/lib",
			setup: func(f *fixture) {
				f.files["usr/lib/os-release"] = f.files["etc/os-release"]
				delete(f.files, "etc/os-release")
			},
			want: full,
		},
		{
			name:  "no os-release",
			setup: func(f *fixture) { delete(f.files, "etc/os-release") },
			want:  with(func(s *Software) { s.OSVersion = "unknown" }),
		},
		{
			name:  "no /proc: kernel is unknown when uname fails too",
			setup: func(f *fixture) { delete(f.files, "proc/sys/kernel/osrelease") },
			want:  with(func(s *Software) { s.Kernel = "unknown" }),
		},
		{
			name:  "no python3",
			setup: func(f *fixture) { f.python = nil },
			want:  with(func(s *Software) { s.PythonVersion = nil }),
		},
		{
			name:  "no build information",
			setup: func(f *fixture) { f.build = nil },
			want:  with(func(s *Software) { s.Packages = []string{} }),
		},
		{
			name:  "development build of the main module",
			setup: func(f *fixture) { f.build.Main.Version = "" },
			want:  with(func(s *Software) { s.Packages[0] = "toolshed==(devel)" }),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			sw := mustCall[Software](t, f.source(), `{"command":"list_software"}`)
			sameJSON(t, "software", sw, tt.want)
		})
	}
}

func TestKernelFromUname(t *testing.T) {
	f := newFixture(t)
	delete(f.files, "proc/sys/kernel/osrelease")
	src := f.source()
	src.Uname = func(context.Context) (string, error) { return "23.4.0\n", nil }
	sw := mustCall[Software](t, src, `{"command":"list_software"}`)
	if sw.Kernel != "23.4.0" {
		t.Errorf("kernel = %q, want 23.4.0", sw.Kernel)
	}
}

func TestParsePythonVersion(t *testing.T) {
	tests := []struct {
		output string
		want   *string
	}{
		{"Python 3.11.4", ptr("3.11.4")},
		{"Python 3.13.0rc1\n", ptr("3.13.0rc1")},
		{"", nil},
		{"python3: command not found", nil},
		{"Python", nil},
	}
	for _, tt := range tests {
		sameJSON(t, tt.output, parsePythonVersion(tt.output), tt.want)
	}
}

func TestUnescapeMount(t *testing.T) {
	tests := map[string]string{
		`/mnt/My\040Data`: "/mnt/My Data",
		`/a\011b\134c`:    "/a\tb\\c",
		`/plain`:          "/plain",
		`/short\04`:       `/short\04`,
	}
	for in, want := range tests {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// ---- diff_baseline ----

func TestDiffBaseline(t *testing.T) {
	f := newFixture(t)
	src := f.source()
	current := func(cmd string) map[string]any {
		data, err := call(t, src, `{"command":"`+cmd+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	tests := []struct {
		name     string
		baseline func() any
		want     Diff
	}{
		{
			name:     "identical software",
			baseline: func() any { return current("list_software") },
			want:     Diff{Kind: "software", Changes: Changes{Added: []Entry{}, Removed: []Entry{}, Modified: []Modification{}}},
		},
		{
			name:     "identical hardware",
			baseline: func() any { return current("list_hardware") },
			want:     Diff{Kind: "hardware", Changes: Changes{Added: []Entry{}, Removed: []Entry{}, Modified: []Modification{}}},
		},
		{
			name: "package added, removed and upgraded",
			baseline: func() any {
				b := current("list_software")
				b["packages"] = []string{
					"toolshed==v0.3.0",
					"github.com/aws/aws-lambda-go==v1.50.0",
					"github.com/old/gone==v1.0.0",
					"github.com/santhosh-tekuri/jsonschema/v5==v5.3.1",
				}
				return b
			},
			want: Diff{Kind: "software", Changes: Changes{
				Added: []Entry{
					{Path: "packages[example.com/forked==v1.2.4]", Value: "example.com/forked==v1.2.4"},
					{Path: "packages[github.com/aws/aws-lambda-go==v1.55.1]", Value: "github.com/aws/aws-lambda-go==v1.55.1"},
				},
				Removed: []Entry{
					{Path: "packages[github.com/aws/aws-lambda-go==v1.50.0]", Value: "github.com/aws/aws-lambda-go==v1.50.0"},
					{Path: "packages[github.com/old/gone==v1.0.0]", Value: "github.com/old/gone==v1.0.0"},
				},
				Modified: []Modification{},
			}},
		},
		{
			name: "the contract's software baseline",
			baseline: func() any {
				return json.RawMessage(`{"os_version":"Ubuntu 22.04.3 LTS","kernel":"5.15.0-78-generic","python_version":"3.11.4","packages":["fastapi==0.103.2"]}`)
			},
			want: Diff{Kind: "software", Changes: Changes{
				Added: []Entry{
					{Path: "go_version", Value: "go1.26.8"},
					{Path: "packages[example.com/forked==v1.2.4]", Value: "example.com/forked==v1.2.4"},
					{Path: "packages[github.com/aws/aws-lambda-go==v1.55.1]", Value: "github.com/aws/aws-lambda-go==v1.55.1"},
					{Path: "packages[github.com/santhosh-tekuri/jsonschema/v5==v5.3.1]", Value: "github.com/santhosh-tekuri/jsonschema/v5==v5.3.1"},
					{Path: "packages[toolshed==v0.3.0]", Value: "toolshed==v0.3.0"},
				},
				Removed:  []Entry{{Path: "packages[fastapi==0.103.2]", Value: "fastapi==0.103.2"}},
				Modified: []Modification{},
			}},
		},
		{
			name: "python removed since the baseline becomes null",
			baseline: func() any {
				b := current("list_software")
				f.python = nil
				return b
			},
			want: Diff{Kind: "software", Changes: Changes{
				Added: []Entry{}, Removed: []Entry{},
				Modified: []Modification{{Path: "python_version", From: "3.11.4", To: nil}},
			}},
		},
		{
			name: "hardware: RAM upgraded, a disk added, numbers compared numerically",
			baseline: func() any {
				return json.RawMessage(`{
					"cpu": {"model": "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", "cores": 4.0, "threads": 8, "frequency_mhz": 2100},
					"gpus": [],
					"ram_gb": {"total": 8, "used": 4.21, "free": 3.79},
					"disks": [
						{"mount": "/", "size_gb": 502.47, "used_gb": 100},
						{"mount": "/boot/efi", "size_gb": 0.54, "used_gb": 0.01},
						{"mount": "/mnt/My Data", "size_gb": 4000.79, "used_gb": 0}
					],
					"os": "linux", "arch": "amd64"}`)
			},
			want: Diff{Kind: "hardware", Changes: Changes{
				Added: []Entry{
					{Path: "disks[/data].mount", Value: "/data"},
					{Path: "disks[/data].size_gb", Value: 2000.4},
					{Path: "disks[/data].used_gb", Value: 1},
				},
				Removed: []Entry{},
				Modified: []Modification{
					{Path: "disks[/].used_gb", From: 100, To: 123.46},
					{Path: "ram_gb.free", From: 3.79, To: 12.5},
					{Path: "ram_gb.total", From: 8, To: 16.71},
				},
			}},
		},
		{
			name: "a GPU removed",
			baseline: func() any {
				b := current("list_hardware")
				b["gpus"] = []GPU{{Name: "NVIDIA A100", VRAMGB: ptr(80.0), DriverVersion: ptr("535.104.05")}}
				return b
			},
			want: Diff{Kind: "hardware", Changes: Changes{
				Added: []Entry{},
				Removed: []Entry{
					{Path: "gpus[NVIDIA A100].driver_version", Value: "535.104.05"},
					{Path: "gpus[NVIDIA A100].name", Value: "NVIDIA A100"},
					{Path: "gpus[NVIDIA A100].vram_gb", Value: 80},
				},
				Modified: []Modification{},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.python = ptr("3.11.4")
			baseline, err := json.Marshal(tt.baseline())
			if err != nil {
				t.Fatal(err)
			}
			got := mustCall[Diff](t, src, `{"command":"diff_baseline","baseline":`+string(baseline)+`}`)
			sameJSON(t, "diff", got, tt.want)
		})
	}
}

func TestDiffBaselineIdenticalGPUsAreCountedApart(t *testing.T) {
	f := newFixture(t)
	f.addNvidiaGPU(t, "0000:01:00.0")
	f.addNvidiaGPU(t, "0000:02:00.0")
	baseline := `{"cpu":{"cores":4,"threads":8,"frequency_mhz":2100},"gpus":[{"name":"NVIDIA GeForce RTX 3090","vram_gb":null,"driver_version":"535.104.05"}]}`
	got := mustCall[Diff](t, f.source(), `{"command":"diff_baseline","baseline":`+baseline+`}`)
	var added []string
	for _, e := range got.Changes.Added {
		if strings.HasPrefix(e.Path, "gpus") {
			added = append(added, e.Path)
		}
	}
	want := []string{
		"gpus[NVIDIA GeForce RTX 3090#2].driver_version",
		"gpus[NVIDIA GeForce RTX 3090#2].name",
		"gpus[NVIDIA GeForce RTX 3090#2].vram_gb",
	}
	sameJSON(t, "added gpus", added, want)
}

func TestInvalidInput(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		message string
	}{
		{"baseline that is not an audit output", `{"command":"diff_baseline","baseline":{"foo":1}}`, "baseline: must be an output of list_hardware or list_software"},
		{"empty baseline", `{"command":"diff_baseline","baseline":{}}`, "baseline: must be an output of list_hardware or list_software"},
		{"baseline with list_hardware", `{"command":"list_hardware","baseline":{"cpu":{}}}`, "baseline: only used by command diff_baseline"},
		{"baseline with list_software", `{"command":"list_software","baseline":{"kernel":"x"}}`, "baseline: only used by command diff_baseline"},
		{"diff_baseline without baseline", `{"command":"diff_baseline"}`, "baseline: required"},
		{"unknown command", `{"command":"format_disk"}`, "command: must be one of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(t, newFixture(t).source(), tt.args)
			wantInvalidInput(t, err, tt.message)
		})
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, cmd := range []string{"list_hardware", "list_software"} {
		tool := New(newFixture(t).source())
		_, err := tool.Handler(ctx, toolkit.Call{Tool: ToolName, Args: json.RawMessage(`{"command":"` + cmd + `"}`)})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: error = %v, want context.Canceled", cmd, err)
		}
	}
}

// ---- through the pipeline ----

func newPipeline(t *testing.T, src Source) *toolkit.Pipeline {
	t.Helper()
	p, err := toolkit.NewPipeline(contractSet(t), []toolkit.Tool{New(src)}, toolkit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestContractExamples runs every example of contracts/sys-audit.json end
// to end against the fixture machine.
func TestContractExamples(t *testing.T) {
	c, _ := contractSet(t).Get(ToolName)
	p := newPipeline(t, newFixture(t).source())
	for _, ex := range c.Examples {
		t.Run(ex.Name, func(t *testing.T) {
			out := p.Invoke(context.Background(), toolkit.Request{Tool: ToolName, Tenant: "t1", Args: ex.Input})
			if ex.Error != "" {
				if out.OK || out.Error == nil || out.Error.Code != ex.Error {
					t.Fatalf("outcome = %+v, want error %s", out, ex.Error)
				}
				return
			}
			if !out.OK {
				t.Fatalf("outcome = %+v (error %+v), want success", out, out.Error)
			}
			if len(ex.Output) > 0 {
				var want, got map[string]any
				_ = json.Unmarshal(ex.Output, &want)
				_ = json.Unmarshal(out.Result, &got)
				for k, v := range want {
					sameJSON(t, k, got[k], v)
				}
			}
		})
	}
}

func TestPipeline(t *testing.T) {
	p := newPipeline(t, newFixture(t).source())
	tests := []struct {
		name     string
		tool     string
		args     string
		wantCode toolerr.Code // "" for success
		wantKey  string       // a key the result must have
	}{
		{name: "list_hardware", tool: "sys-audit", args: `{"command":"list_hardware"}`, wantKey: "cpu"},
		{name: "seed alias", tool: "adam-sys-audit", args: `{"command":"list_software"}`, wantKey: "packages"},
		{name: "diff", tool: "sys-audit", args: `{"command":"diff_baseline","baseline":{"kernel":"5.15.0-78-generic"}}`, wantKey: "changes"},
		{name: "baseline missing", tool: "sys-audit", args: `{"command":"diff_baseline"}`, wantCode: toolerr.InvalidInput},
		{name: "baseline not an audit", tool: "sys-audit", args: `{"command":"diff_baseline","baseline":{"foo":1}}`, wantCode: toolerr.InvalidInput},
		{name: "baseline on another command", tool: "sys-audit", args: `{"command":"list_hardware","baseline":{"cpu":{}}}`, wantCode: toolerr.InvalidInput},
		{name: "unknown command", tool: "sys-audit", args: `{"command":"format_disk"}`, wantCode: toolerr.InvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := p.Invoke(context.Background(), toolkit.Request{Tool: tt.tool, Tenant: "t1", Args: json.RawMessage(tt.args)})
			if tt.wantCode != "" {
				if out.OK || out.Error == nil || out.Error.Code != tt.wantCode {
					t.Fatalf("outcome = %+v, want %s", out, tt.wantCode)
				}
				return
			}
			if !out.OK {
				t.Fatalf("outcome error = %+v", out.Error)
			}
			if out.Tool != ToolName {
				t.Errorf("tool = %q, want %q", out.Tool, ToolName)
			}
			var result map[string]json.RawMessage
			if err := json.Unmarshal(out.Result, &result); err != nil {
				t.Fatal(err)
			}
			if _, ok := result[tt.wantKey]; !ok {
				t.Errorf("result %s has no %q", out.Result, tt.wantKey)
			}
		})
	}
}

// ---- the real machine ----

func TestSystem(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks /proc values; runs on Linux")
	}
	src := System()

	hw := mustCall[Hardware](t, src, `{"command":"list_hardware"}`)
	if hw.CPU.Threads < 1 || hw.CPU.Cores < 1 || hw.CPU.Cores > hw.CPU.Threads {
		t.Errorf("cpu = %+v, want 1 <= cores <= threads", hw.CPU)
	}
	if hw.RAM.Total <= 0 || hw.RAM.Used < 0 || hw.RAM.Free < 0 || hw.RAM.Used+hw.RAM.Free > hw.RAM.Total+0.02 {
		t.Errorf("ram_gb = %+v, want total > 0 = used + free", hw.RAM)
	}
	if hw.OS != "linux" || hw.Arch != runtime.GOARCH {
		t.Errorf("os, arch = %q, %q", hw.OS, hw.Arch)
	}
	for _, d := range hw.Disks {
		if d.SizeGB <= 0 || d.UsedGB < 0 || d.UsedGB > d.SizeGB || !strings.HasPrefix(d.Mount, "/") {
			t.Errorf("disk %+v is not sane", d)
		}
	}

	sw := mustCall[Software](t, src, `{"command":"list_software"}`)
	if sw.Kernel == "" || sw.Kernel == "unknown" {
		t.Errorf("kernel = %q", sw.Kernel)
	}
	if sw.GoVersion != runtime.Version() {
		t.Errorf("go_version = %q, want %q", sw.GoVersion, runtime.Version())
	}
	if len(sw.Packages) == 0 || !strings.HasPrefix(sw.Packages[0], "toolshed==") {
		t.Errorf("packages = %q, want toolshed first", sw.Packages)
	}
	if _, err := exec.LookPath("python3"); err == nil && sw.PythonVersion == nil {
		t.Error("python3 is on PATH but python_version is null")
	}

	same := mustCall[Diff](t, src, `{"command":"diff_baseline","baseline":`+mustJSON(t, sw)+`}`)
	if n := len(same.Changes.Added) + len(same.Changes.Removed) + len(same.Changes.Modified); n != 0 {
		t.Errorf("software diff against itself has %d changes: %+v", n, same.Changes)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestHostileBaselineIsBounded: the largest baseline the contract accepts,
// made of thousands of leaves and long strings, gives a diff no larger than
// a small multiple of itself; one byte more is refused before decoding.
func TestHostileBaselineIsBounded(t *testing.T) {
	p := newPipeline(t, newFixture(t).source())
	c, _ := contractSet(t).Get(ToolName)
	build := func(size int) string {
		var b strings.Builder
		b.WriteString(`{"command":"diff_baseline","baseline":{"kernel":"` + strings.Repeat("k", 20000) + `","packages":[`)
		for i := 0; b.Len() < size-100; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"pkg%06d==1"`, i)
		}
		b.WriteString(`]}}`)
		for b.Len() < size {
			b.WriteString(" ")
		}
		return b.String()
	}
	args := build(c.MaxInputBytes)
	out := p.Invoke(context.Background(), toolkit.Request{Tool: ToolName, Tenant: "t1", Args: json.RawMessage(args)})
	if !out.OK {
		t.Fatalf("largest accepted baseline: %+v", out.Error)
	}
	var d Diff
	if err := json.Unmarshal(out.Result, &d); err != nil {
		t.Fatal(err)
	}
	if d.Truncated == nil || d.Truncated.Removed < 10000 || len(d.Changes.Removed) != MaxChanges {
		t.Errorf("truncated %+v with %d removed shown", d.Truncated, len(d.Changes.Removed))
	}
	for _, m := range d.Changes.Modified {
		if s, ok := m.From.(string); ok && len(s) > 4*maxValueRunes+3 {
			t.Errorf("%s: a %d-byte value was echoed whole", m.Path, len(s))
		}
	}
	if len(out.Result) > len(args)/4 {
		t.Errorf("a %d-byte baseline produced a %d-byte diff", len(args), len(out.Result))
	}

	over := build(c.MaxInputBytes + 1)
	out = p.Invoke(context.Background(), toolkit.Request{Tool: ToolName, Tenant: "t1", Args: json.RawMessage(over)})
	if out.OK || out.Error.Code != toolerr.SizeLimitExceeded {
		t.Errorf("baseline one byte over the limit: %+v", out.Error)
	}
}
