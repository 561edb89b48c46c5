package nvidia

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

// replayNVML is a host.NVML that gives back recorded answers, as a snapshot
// does on a machine without NVML.
type replayNVML struct {
	b   []byte
	err error
}

func (r replayNVML) Query(context.Context) ([]byte, error) { return r.b, r.err }

// fakeSMI is a Runner with a scripted nvidia-smi.
type fakeSMI struct {
	missing bool
	hang    bool
	// outputs by joined arguments; an entry in errs fails that call.
	outputs map[string]string
	errs    map[string]error
	calls   []string
}

func (f *fakeSMI) LookPath(name string) (string, error) {
	if f.missing || name != "nvidia-smi" {
		return "", fmt.Errorf("%s: %w", name, host.ErrNotFound)
	}
	return "/usr/bin/nvidia-smi", nil
}

func (f *fakeSMI) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if _, err := f.LookPath(name); err != nil {
		return nil, err
	}
	key := strings.Join(args, " ")
	f.calls = append(f.calls, key)
	if f.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if err, ok := f.errs[key]; ok {
		return []byte(f.outputs[key]), err
	}
	out, ok := f.outputs[key]
	if !ok {
		return nil, fmt.Errorf("unexpected nvidia-smi %s", key)
	}
	return []byte(out), nil
}

var (
	queryKey  = strings.Join(QueryArgs(QueryFields), " ")
	legacyKey = strings.Join(QueryArgs(QueryFieldsLegacy), " ")
)

// testHost builds a host over a temp tree holding the given files.
func testHost(t *testing.T, files map[string]string, nv host.NVML, r host.Runner) *host.Host {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r == nil {
		r = host.NoRunner{}
	}
	return &host.Host{OS: "linux", FS: host.DirFS(root), Runner: r, NVML: nv}
}

func TestProbeReplaysRecordedNVML(t *testing.T) {
	kmod := string(readFixture(t, "proc", "proprietary-580.173.02-truenas.txt"))
	h := testHost(t, map[string]string{ProcVersionPath: kmod}, replayNVML{b: readFixture(t, "raw", "h100-pcie-x2-full.json")}, nil)
	res, err := New().Probe(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	want := &probe.Platform{
		Backend: "cuda", DriverVersion: probe.Ptr("550.90.07"), RuntimeVersion: probe.Ptr("12.4"),
		LibraryVersion: probe.Ptr("12.550.90.07"), KernelModuleVersion: probe.Ptr("580.173.02"),
	}
	if diff := cmp.Diff(want, res.Platform); diff != "" {
		t.Errorf("platform (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&probe.HostInfo{NvidiaKernelMod: probe.Ptr("580.173.02")}, res.Host); diff != "" {
		t.Errorf("host (-want +got):\n%s", diff)
	}
	if res.Source != "nvml" || len(res.Devices) != 2 || res.Devices[1].ID != "cuda:1" {
		t.Errorf("source %q devices %d", res.Source, len(res.Devices))
	}
	if want := "2 GPUs (2× NVIDIA H100 PCIe); driver 550.90.07; CUDA 12.4"; res.Detail != want {
		t.Errorf("detail = %q, want %q", res.Detail, want)
	}
}

func TestProbeFallsBackToNvidiaSMI(t *testing.T) {
	quadro := string(readFixture(t, "smi", "query-535.129.03-quadro-rtx4000-x2.csv"))
	banner := string(readFixture(t, "smi", "banner-535.129.03-quadro-rtx4000.txt"))
	a100q := string(readFixture(t, "smi", "q-470.103.01-a100-sxm4-80gb.txt"))
	legacy := string(readFixture(t, "smi", "query-legacy-470.103.01-a100-sxm4-80gb.csv"))
	invalid := string(readFixture(t, "smi", "err-compute-cap-invalid.txt"))
	notFound := replayNVML{b: readFixture(t, "raw", "init-library-not-found.json")}

	tests := []struct {
		name        string
		nvml        host.NVML
		smi         *fakeSMI
		wantNames   []string
		wantCC      *string
		wantCUDA    *string
		wantDriver  string
		wantDetail  string
		wantInitRet *Return
	}{
		{
			name: "NVML library missing: nvidia-smi lists the GPUs and the CUDA version", nvml: notFound,
			smi:       &fakeSMI{outputs: map[string]string{queryKey: quadro, "-q -d COMPUTE": banner}},
			wantNames: []string{"Quadro RTX 4000", "Quadro RTX 4000"}, wantCC: probe.Ptr("7.5"), wantCUDA: probe.Ptr("12.2"),
			wantDriver: "535.129.03", wantDetail: "fallback: NVML library not found", wantInitRet: probe.Ptr(ErrLibraryNotFound),
		},
		{
			name: "no NVML in this build and an old nvidia-smi without compute_cap", nvml: nil,
			smi: &fakeSMI{
				outputs: map[string]string{queryKey: invalid, legacyKey: legacy, "-q": a100q},
				errs:    map[string]error{queryKey: errors.New("nvidia-smi: exit status 2: " + strings.TrimSpace(invalid)), "-q -d COMPUTE": errors.New("nvidia-smi: exit status 2: invalid -d")},
			},
			wantNames: []string{"NVIDIA A100-SXM4-80GB"}, wantCUDA: probe.Ptr("11.4"), wantDriver: "470.103.01",
			wantDetail: "fallback: NVML not available",
		},
		{
			name: "a failing nvidia-smi -q leaves the CUDA version unknown", nvml: nil,
			smi: &fakeSMI{
				outputs: map[string]string{queryKey: quadro},
				errs:    map[string]error{"-q -d COMPUTE": errors.New("nvidia-smi: exit status 1"), "-q": errors.New("nvidia-smi: exit status 1")},
			},
			wantNames: []string{"Quadro RTX 4000", "Quadro RTX 4000"}, wantCC: probe.Ptr("7.5"), wantDriver: "535.129.03",
			wantDetail: "fallback: NVML not available",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := testHost(t, nil, tt.nvml, tt.smi)
			res, err := New().Probe(context.Background(), h)
			if err != nil {
				t.Fatalf("Probe: %v", err)
			}
			if res.Source != "nvidia-smi" {
				t.Errorf("source = %q", res.Source)
			}
			var names []string
			for _, d := range res.Devices {
				names = append(names, d.Name)
			}
			if diff := cmp.Diff(tt.wantNames, names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCC, res.Devices[0].ComputeCapability); diff != "" {
				t.Errorf("cc (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCUDA, res.Platform.RuntimeVersion); diff != "" {
				t.Errorf("cuda (-want +got):\n%s", diff)
			}
			if res.Platform.DriverVersion == nil || *res.Platform.DriverVersion != tt.wantDriver {
				t.Errorf("driver = %v", res.Platform.DriverVersion)
			}
			if !strings.Contains(res.Detail, tt.wantDetail) {
				t.Errorf("detail %q lacks %q", res.Detail, tt.wantDetail)
			}
			raw, _ := Answers(h)
			if raw.Source != SourceNVIDIASMI || !cmp.Equal(tt.wantInitRet, raw.InitRet) {
				t.Errorf("raw source %q init %v", raw.Source, raw.InitRet)
			}
		})
	}
}

func TestProbeOutcomes(t *testing.T) {
	kmod := string(readFixture(t, "proc", "open-565.57.01-ubuntu.txt"))
	mismatch := string(readFixture(t, "smi", "err-version-mismatch-580.txt"))
	tests := []struct {
		name       string
		files      map[string]string
		nvml       host.NVML
		smi        *fakeSMI
		wantStatus string
		wantDetail string
	}{
		{
			name: "nothing NVIDIA on the machine is absent with both reasons", smi: &fakeSMI{missing: true},
			wantStatus: "absent", wantDetail: "NVML not available; nvidia-smi not on PATH",
		},
		{
			name: "a missing NVML library and no nvidia-smi is absent", nvml: replayNVML{b: readFixture(t, "raw", "init-library-not-found.json")}, smi: &fakeSMI{missing: true},
			wantStatus: "absent", wantDetail: "NVML library not found; nvidia-smi not on PATH",
		},
		{
			name: "a loaded module without device nodes reads as a container without GPUs", files: map[string]string{ProcVersionPath: kmod}, smi: &fakeSMI{missing: true},
			wantStatus: "absent", wantDetail: "NVIDIA kernel module 565.57.01 is loaded but /dev/nvidiactl is missing here",
		},
		{
			name: "a loaded module with device nodes but nothing to list them is an error", files: map[string]string{ProcVersionPath: kmod, "/dev/nvidiactl": ""}, smi: &fakeSMI{missing: true},
			wantStatus: "error", wantDetail: "NVIDIA kernel module 565.57.01 is loaded but no GPU could be listed: NVML not available; nvidia-smi not on PATH",
		},
		{
			name: "a library and module mismatch is an error even without nvidia-smi", nvml: replayNVML{b: readFixture(t, "raw", "init-lib-rm-mismatch.json")}, smi: &fakeSMI{missing: true},
			wantStatus: "error", wantDetail: "NVML init failed: ERROR_LIB_RM_VERSION_MISMATCH",
		},
		{
			name:       "nvidia-smi failing on a version mismatch is an error with its message",
			smi:        &fakeSMI{outputs: map[string]string{queryKey: mismatch}, errs: map[string]error{queryKey: errors.New("nvidia-smi: exit status 18: " + strings.Join(strings.Fields(mismatch), " "))}},
			wantStatus: "error", wantDetail: "nvidia-smi failed: nvidia-smi: exit status 18: Failed to initialize NVML: Driver/library version mismatch",
		},
		{
			name:       "nvidia-smi finding no devices is absent",
			smi:        &fakeSMI{errs: map[string]error{queryKey: errors.New("nvidia-smi: exit status 6: No devices were found")}},
			wantStatus: "absent", wantDetail: "nvidia-smi: no devices were found",
		},
		{
			name: "NVML working with no GPUs is absent", nvml: replayNVML{b: readFixture(t, "raw", "init-ok-no-gpus.json")},
			wantStatus: "absent", wantDetail: "nvml found no NVIDIA GPU",
		},
		{
			name: "an NVML query error falls back and reports both", nvml: replayNVML{err: errors.New("snapshot has no NVML answers")}, smi: &fakeSMI{missing: true},
			wantStatus: "absent", wantDetail: "NVML query failed: snapshot has no NVML answers; nvidia-smi not on PATH",
		},
		{
			name: "undecodable NVML data falls back", nvml: replayNVML{b: []byte("{")}, smi: &fakeSMI{missing: true},
			wantStatus: "absent", wantDetail: "decoding NVML answers",
		},
		{
			name:       "garbage from nvidia-smi is an error naming the line",
			smi:        &fakeSMI{outputs: map[string]string{queryKey: "0, Tesla T4\n"}},
			wantStatus: "error", wantDetail: "nvidia-smi output not understood: nvidia-smi line 1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r host.Runner
			if tt.smi != nil {
				r = tt.smi
			}
			h := testHost(t, tt.files, tt.nvml, r)
			_, outs, err := probe.Run(context.Background(), h, []probe.Driver{New()}, probe.Options{Timeout: 2 * time.Second, FallbackEnabled: true})
			if err != nil {
				t.Fatal(err)
			}
			st := outs[0].Status
			if st.Status != tt.wantStatus || !strings.Contains(st.Detail, tt.wantDetail) {
				t.Errorf("got %s %q\nwant %s containing %q", st.Status, st.Detail, tt.wantStatus, tt.wantDetail)
			}
			if _, ok := Answers(h); !ok {
				t.Error("no raw answers for doctor (Answers)")
			}
		})
	}
}

// otherDriver finishes at once; a hanging nvidia driver must not hold it up.
type otherDriver struct{}

func (otherDriver) Name() string { return "other" }
func (otherDriver) Probe(context.Context, *host.Host) (probe.Result, error) {
	return probe.Result{}, nil
}

// hangingNVML never answers, like nvmlInit on a wedged driver.
type hangingNVML struct{ release chan struct{} }

func (h hangingNVML) Query(ctx context.Context) ([]byte, error) {
	<-h.release
	return nil, errors.New("released")
}

func TestProbeTimesOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	tests := []struct {
		name string
		nvml host.NVML
		smi  *fakeSMI
	}{
		{"a hanging nvidia-smi", nil, &fakeSMI{hang: true}},
		{"an NVML source that ignores the deadline", hangingNVML{release: release}, &fakeSMI{missing: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := testHost(t, nil, tt.nvml, tt.smi)
			start := time.Now()
			_, outs, err := probe.Run(context.Background(), h, []probe.Driver{New(), otherDriver{}}, probe.Options{Timeout: 150 * time.Millisecond, FallbackEnabled: true})
			if err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el > time.Second {
				t.Errorf("took %s", el)
			}
			if outs[0].Status.Status != probe.StatusTimeout || outs[1].Status.Status != probe.StatusOK {
				t.Errorf("statuses %s/%s (%s)", outs[0].Status.Status, outs[1].Status.Status, outs[0].Status.Detail)
			}
		})
	}
}
