package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/testutil/fakehost"
)

// fakeRunner answers programs from a map keyed "name arg1 arg2".
type fakeRunner map[string]string

func (f fakeRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	key := strings.Join(append([]string{name}, args...), " ")
	out, ok := f[key]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, host.ErrNotFound)
	}
	if msg, isErr := strings.CutPrefix(out, "ERROR:"); isErr {
		return []byte("partial\n"), fmt.Errorf("%s: exit status 9: %s", name, msg)
	}
	return []byte(out), nil
}

func (f fakeRunner) LookPath(name string) (string, error) {
	for k := range f {
		if strings.Split(k, " ")[0] == name {
			return "/usr/bin/" + name, nil
		}
	}
	return "", fmt.Errorf("%s: %w", name, host.ErrNotFound)
}

type fakeSysctl map[string]string

func (s fakeSysctl) Get(name string) (string, error) {
	if v, ok := s[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("sysctl %s: %w", name, host.ErrNotFound)
}

type fakeNVML struct {
	data string
	err  error
}

func (n fakeNVML) Query(context.Context) ([]byte, error) {
	if n.err != nil {
		return nil, n.err
	}
	return []byte(n.data), nil
}

// fixtureHost is a Linux-like host over a temp tree with fake programs,
// sysctl and NVML.
func fixtureHost(t *testing.T, files map[string]string, env host.MapEnv) *host.Host {
	t.Helper()
	root := t.TempDir()
	fakehost.WriteT(t, root, files)
	h, err := host.Local(host.LocalOptions{Sysroot: root})
	if err != nil {
		t.Fatal(err)
	}
	h.OS, h.Arch, h.Hostname = "linux", "amd64", "gpu-node-17"
	h.Identity = host.Identity{UID: 1000, Groups: []string{"users", "video"}}
	h.Env = env
	h.Now = func() time.Time { return time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC) }
	return h
}

// readAllDriver asks the host every kind of question and puts the answers,
// errors included, into its result, so that any difference between a live
// run and a replay shows in the report.
type readAllDriver struct{}

func (readAllDriver) Name() string { return "readall" }

func (readAllDriver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	var notes []string
	note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }

	if b, err := h.FS.ReadFile("/proc/cpuinfo"); err == nil {
		note("cpuinfo %d bytes %q", len(b), strings.SplitN(string(b), "\n", 2)[0])
	} else {
		note("cpuinfo: %v", err)
	}
	es, err := h.FS.ReadDir("/sys/bus/pci/devices")
	note("pci dir err=%v", err)
	var devs []probe.Device
	for i, e := range es {
		base := "/sys/bus/pci/devices/" + e.Name()
		link, lerr := h.FS.Readlink(base)
		vendor, verr := h.ReadString(base + "/vendor")
		fi, serr := h.FS.Stat(base)
		info, ierr := e.Info()
		isDir := fi != nil && fi.IsDir()
		note("%s type=%v link=%q/%v vendor=%q/%v dir=%v/%v info=%v/%v", e.Name(), e.Type(), link, lerr, vendor, verr, isDir, serr, info != nil && info.Mode()&fs.ModeSymlink != 0, ierr)
		uuid, _ := h.ReadString(base + "/uuid")
		devs = append(devs, probe.Device{ID: fmt.Sprintf("fake:%d", i), Index: i, Backend: "cuda", Name: vendor, UUID: probe.Ptr(uuid)})
	}
	note("nvidia0 exists=%v missing exists=%v", h.Exists("/dev/nvidia0"), h.Exists("/dev/nvidia9"))
	if fi, err := h.FS.Stat("/dev/nvidia0"); err == nil {
		note("nvidia0 mode=%v size=%d", fi.Mode(), fi.Size())
	}
	_, err = h.FS.ReadFile("/proc/driver/nvidia/version")
	note("missing file: %v", err)
	_, err = h.FS.ReadFile("/sys/bus")
	note("read a directory: %v", err)
	_, err = h.FS.ReadFile("relative/path")
	note("relative: %v", err)
	for _, name := range []string{"CUDA_VISIBLE_DEVICES", "HF_TOKEN", "NOT_SET_AT_ALL", "HOME"} {
		v, ok := h.LookupEnv(name)
		note("env %s=%q/%v", name, v, ok)
	}
	for _, args := range [][]string{{"nvidia-smi", "-q"}, {"nvidia-smi", "--query-gpu=uuid,serial", "--format=csv"}, {"amd-smi", "list"}, {"broken-tool"}} {
		out, err := h.Runner.Run(ctx, args[0], args[1:]...)
		note("run %v: %q err=%v notfound=%v", args, out, err, err != nil && strings.Contains(err.Error(), "not found"))
	}
	p, err := h.Runner.LookPath("nvidia-smi")
	note("lookpath %q %v", p, err)
	for _, k := range []string{"hw.memsize", "kern.osproductversion"} {
		v, err := h.Sysctl.Get(k)
		note("sysctl %s=%q %v", k, v, err)
	}
	if h.NVML != nil {
		b, err := h.NVML.Query(ctx)
		var v any
		jerr := json.Unmarshal(b, &v)
		note("nvml %v %v %v", v, err, jerr)
	} else {
		note("no nvml")
	}
	note("id %d %v host %s/%s %q now %s", h.Identity.UID, h.Identity.Groups, h.OS, h.Arch, h.Hostname, h.Now().UTC().Format(time.RFC3339))
	return probe.Result{Devices: devs, Source: "fake", Detail: strings.Join(notes, "\n")}, nil
}

// runReport probes h with the given drivers and zeroes durations.
func runReport(t *testing.T, h *host.Host, ds ...probe.Driver) *probe.Report {
	t.Helper()
	rep, _, err := probe.Run(context.Background(), h, ds, probe.Options{Timeout: 10 * time.Second, DevctlVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rep.Drivers {
		rep.Drivers[i].DurationMS = 0
	}
	return rep
}

// archiveBytes writes rec's snapshot and returns the compressed bytes.
func archiveBytes(t *testing.T, rec *Recorder, opts WriteOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := rec.Write(&buf, opts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
