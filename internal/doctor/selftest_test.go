package doctor

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/selftest"
)

func TestSelftestOptions(t *testing.T) {
	pyenv := probe.PythonEnv{Kind: "system", Prefix: "/root/.pyenv/versions/3.11.7", Interpreter: "/root/.pyenv/versions/3.11.7/bin/python3", Via: "pyenv shim: 3.11.7 (from /root/.pyenv/version)"}
	debian := probe.PythonEnv{Kind: "system", Prefix: "/usr", Interpreter: "/usr/bin/python3", Packages: []probe.Package{{Name: "torch", Version: "1.13.0a0+gitunknown", Installer: "debian"}}}
	venv := probe.PythonEnv{Kind: "venv", Prefix: "/home/u/venv", Active: true, Interpreter: "/home/u/venv/bin/python3"}
	cpu := probe.Device{ID: "cpu", Backend: backend.CPU, SupportsBF16: true}
	t4 := probe.Device{ID: "cuda:0", Backend: backend.CUDA, SupportsFP16: true}
	tpu := probe.Device{ID: "xla:0", Backend: backend.XLA, SupportsBF16: true}
	tests := []struct {
		name       string
		envs       []probe.PythonEnv
		devices    []probe.Device
		python     string
		wantPython string
		wantSource string
		wantClaims map[backend.Backend][]string
		wantMemory bool
		wantNetNS  bool
	}{
		{"the first Python on PATH, a pyenv shim, on a CPU-only machine: RLIMIT_AS and a namespace",
			[]probe.PythonEnv{pyenv, debian}, []probe.Device{cpu}, "", pyenv.Interpreter,
			"the first Python on PATH (pyenv shim: 3.11.7 (from /root/.pyenv/version))",
			map[backend.Backend][]string{backend.CPU: {"fp32", "bf16"}}, true, true},
		{"the active venv wins; a GPU turns RLIMIT_AS off",
			[]probe.PythonEnv{venv, pyenv}, []probe.Device{t4, cpu}, "", venv.Interpreter, "the active venv environment /home/u/venv",
			map[backend.Backend][]string{backend.CPU: {"fp32", "bf16"}, backend.CUDA: {"fp32", "fp16"}}, false, true},
		{"--python wins; a TPU host keeps its network",
			[]probe.PythonEnv{venv}, []probe.Device{tpu, cpu}, "/opt/py/bin/python3", "/opt/py/bin/python3", "--python",
			map[backend.Backend][]string{backend.CPU: {"fp32", "bf16"}, backend.XLA: {"fp32", "bf16"}}, false, false},
		{"no environment at all", nil, []probe.Device{cpu}, "", "", "no VIRTUAL_ENV, CONDA_PREFIX or python3/python on PATH",
			map[backend.Backend][]string{backend.CPU: {"fp32", "bf16"}}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Env{Report: &probe.Report{Devices: tt.devices, Software: &probe.Software{Environments: tt.envs}}}
			o := SelftestOptions(context.Background(), e, SelftestRequest{Python: tt.python, Live: true})
			if o.Python != tt.wantPython || o.PythonSource != tt.wantSource {
				t.Errorf("python %q (%s), want %q (%s)", o.Python, o.PythonSource, tt.wantPython, tt.wantSource)
			}
			if diff := cmp.Diff(tt.wantClaims, o.Claims); diff != "" {
				t.Errorf("claims (-want +got)\n%s", diff)
			}
			if (o.MemoryLimit > 0) != tt.wantMemory || (o.MemoryLimit == 0 && !strings.Contains(o.MemoryNote, "cuda-python#2381")) {
				t.Errorf("memory limit %d (%s), want set=%v", o.MemoryLimit, o.MemoryNote, tt.wantMemory)
			}
			if o.NetNS != tt.wantNetNS {
				t.Errorf("netns %v, want %v (%s)", o.NetNS, tt.wantNetNS, o.NetNote)
			}
		})
	}
	e := &Env{Report: &probe.Report{Software: &probe.Software{Environments: []probe.PythonEnv{pyenv, debian}}}}
	if got := elsewhere(context.Background(), e, pyenv.Interpreter); !strings.Contains(got, "/usr/bin/python3 has torch 1.13.0a0+gitunknown") {
		t.Errorf("elsewhere = %q", got)
	}
}

func TestSelftestResults(t *testing.T) {
	ms := func(f float64) *float64 { return &f }
	r := &selftest.Outcome{Frameworks: []selftest.Framework{
		{Name: "jax", Status: selftest.Skip},
		{Name: "torch", Status: selftest.Timeout, Error: &selftest.Failure{Category: explain.CategoryUnknown}, Devices: []selftest.Device{{ID: "cuda:0", Backend: backend.CUDA, Ops: []selftest.Op{
			{Name: selftest.OpAllocate, Precision: "fp32", Status: selftest.OpOK, DurationMS: ms(1.6)},
			{Name: selftest.OpMatmul, Precision: "bf16", Status: selftest.OpFailed, DurationMS: ms(0.3),
				Error: &selftest.Failure{Category: explain.CategoryUnsupportedDType, MessageID: "unsupported_dtype.bf16_cc"}},
			{Name: selftest.OpConv1D, Precision: "fp16", Status: selftest.OpUnfinished},
		}}}},
	}}
	want := []history.OperationResult{
		{Device: "cuda", Operation: "torch.allocate", OK: true, DurationMS: 1},
		{Device: "cuda", Operation: "torch.matmul_bf16", Category: "unsupported_dtype", MessageID: "unsupported_dtype.bf16_cc"},
		{Device: "cuda", Operation: "torch.conv1d_fp16", Category: "other", MessageID: "other"},
	}
	if diff := cmp.Diff(want, SelftestResults(r)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if got := history.ScopeOf("unsupported_dtype", "unsupported_dtype.bf16_cc"); got != history.ScopeOperation {
		t.Errorf("a claimed precision that fails counts against the operation, got %s", got)
	}
}
