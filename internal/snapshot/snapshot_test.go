package snapshot

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/drivers"
	"github.com/devctl/devctl/internal/testutil/fakehost"
)

const (
	gpuUUID   = "GPU-4e3f2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9"
	gpuSerial = "1650321098765"
	boardSN   = "PF2XK9QA"
)

// gpuTree is a small synthetic machine: one NVIDIA GPU on PCI, with the
// identifiers that redaction must hide.
func gpuTree() map[string]string {
	return map[string]string{
		"proc/cpuinfo": "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU\n",
		"sys/devices/pci0000:00/0000:00:04.0/vendor": "0x10de\n",
		"sys/devices/pci0000:00/0000:00:04.0/device": "0x20b0\n",
		"sys/devices/pci0000:00/0000:00:04.0/uuid":   strings.TrimPrefix(gpuUUID, "GPU-") + "\n",
		"sys/devices/pci0000:00/0000:00:05.0/vendor": "0x8086\n",
		"sys/bus/pci/devices/0000:00:04.0":           fakehost.Link("../../../devices/pci0000:00/0000:00:04.0"),
		"sys/bus/pci/devices/0000:00:05.0":           fakehost.Link("../../../devices/pci0000:00/0000:00:05.0"),
		"sys/class/dmi/id/board_serial":              boardSN + "\n",
		"sys/class/dmi/id/product_uuid":              "8c1f7a52-3b9e-4d21-9f0a-6e5d4c3b2a19\n",
		"etc/hostname":                               "gpu-node-17\n",
		"dev/nvidia0":                                "",
		"home/user/.ssh/id_ed25519":                  "PRIVATE KEY MATERIAL never read",
		"proc/1/environ":                             "HF_TOKEN=hf_environsecret\x00",
		"proc/1/cmdline":                             "python\x00train.py\x00--api-key=sk-cmdlinesecret\x00--password\x00hunter2secret\x00--epochs=3\x00",
	}
}

func gpuHost(t *testing.T, env host.MapEnv) *host.Host {
	h := fixtureHost(t, gpuTree(), env)
	h.Runner = fakeRunner{
		"nvidia-smi -q": "GPU 00000000:00:04.0\n    Product Name                          : NVIDIA A100-SXM4-40GB\n" +
			"    Serial Number                         : " + gpuSerial + "\n    GPU UUID                              : " + gpuUUID + "\n" +
			"    Board Part Number                     : N/A\n",
		"nvidia-smi --query-gpu=uuid,serial --format=csv": "uuid, serial\n" + gpuUUID + ", " + gpuSerial + "\n",
		"broken-tool": "ERROR:device gpu-node-17 busy",
	}
	h.Sysctl = fakeSysctl{"hw.memsize": "68719476736"}
	h.NVML = fakeNVML{data: `{"driver_version":"550.90.07","devices":[{"index":0,"uuid":"` + gpuUUID + `","serial":"` + gpuSerial + `","name":"NVIDIA A100-SXM4-40GB","mig":[{"uuid":"MIG-7f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"}]}]}`}
	return h
}

func baseEnv() host.MapEnv {
	return host.MapEnv{
		"CUDA_VISIBLE_DEVICES": gpuUUID,
		"HOME":                 "/home/user",
		"HF_TOKEN":             "hf_abcdefSECRETtoken123",
		"UNRELATED_VAR":        "never-looked-up-value",
	}
}

func TestRoundTripGivesTheSameReport(t *testing.T) {
	tests := []struct {
		name   string
		redact bool
	}{
		{"a plain snapshot replays to the same report", false},
		{"a redacted snapshot replays to the same report up to placeholders", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := gpuHost(t, baseEnv())
			ds := append([]probe.Driver{readAllDriver{}}, drivers.All()...)
			rec := NewRecorder(base)
			live := runReport(t, rec.Host(), ds...)
			data := archiveBytes(t, rec, WriteOptions{DevctlVersion: "test", RedactHost: tt.redact})

			s, err := Read(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			replay := runReport(t, s.Host(), ds...)
			if tt.redact {
				// Placeholders differ from the originals by design; the
				// structure must not.
				if diff := cmp.Diff(normalize(t, live), normalize(t, replay)); diff != "" {
					t.Errorf("redacted replay differs beyond placeholders (-live +replay):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff(live, replay); diff != "" {
				t.Errorf("replayed report differs (-live +replay):\n%s", diff)
			}
		})
	}
}

// normalize renders a report with every UUID, serial and hostname, real or
// placeholder, replaced by one word.
func normalize(t *testing.T, rep *probe.Report) string {
	t.Helper()
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out := uuidPattern().ReplaceAllString(string(b), "UUID")
	out = regexp.MustCompile(`REDACTED-SERIAL-\d+|`+gpuSerial+`|`+boardSN).ReplaceAllString(out, "SERIAL")
	return strings.NewReplacer("gpu-node-17", "HOST", RedactedHostname, "HOST").Replace(out)
}

func TestSnapshotsAreDeterministic(t *testing.T) {
	base := gpuHost(t, baseEnv())
	var outs [][]byte
	for range 2 {
		rec := NewRecorder(base)
		runReport(t, rec.Host(), readAllDriver{})
		outs = append(outs, archiveBytes(t, rec, WriteOptions{RedactHost: true}))
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("two recordings of the same answers gave different archives")
	}
}

// untar returns the decompressed tar stream of an archive.
func untar(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSecretsNeverLandInASnapshot(t *testing.T) {
	env := baseEnv()
	secrets := map[string]string{
		"HF_TOKEN":              "hf_abcdefSECRETtoken123",
		"GITHUB_TOKEN":          "ghp_SECRETgithub456",
		"AWS_SECRET_ACCESS_KEY": "wJalrSECRETaws789",
		"OPENAI_API_KEY":        "sk-SECRETopenai000",
		"DB_PASSWORD":           "SECRETpassword111",
		"MYSQL_PWD_PASSWD":      "SECRETpasswd222",
		"SSH_AUTH_SOCK":         "/tmp/SECRETagent.sock",
		"GOOGLE_CREDENTIALS":    "SECRETcredentialjson",
		"SESSION_COOKIE":        "SECRETcookie333",
		"TLS_PRIVATE_PEM":       "SECRETprivatepem",
		"npm_config__authToken": "SECRETnpmauth444",
	}
	for k, v := range secrets {
		env[k] = v
	}
	base := gpuHost(t, env)
	rec := NewRecorder(base)
	h := rec.Host()
	// The drivers look every secret up (a doctor check might ask whether
	// HF_TOKEN is set), and read a process environment and command line.
	for k := range secrets {
		if v, ok := h.LookupEnv(k); !ok || v != WithheldValue {
			t.Errorf("LookupEnv(%s) = %q, %v during recording; want %q, true", k, v, ok, WithheldValue)
		}
	}
	h.LookupEnv("CUDA_VISIBLE_DEVICES")
	if _, err := h.FS.ReadFile("/proc/1/environ"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("reading /proc/1/environ while recording: %v, want a permission error", err)
	}
	cmdline, err := h.FS.ReadFile("/proc/1/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	runReport(t, h, readAllDriver{})

	for _, redact := range []bool{false, true} {
		data := archiveBytes(t, rec, WriteOptions{RedactHost: redact})
		raw := untar(t, data)
		for _, hay := range [][]byte{data, raw} {
			for k, v := range secrets {
				if bytes.Contains(hay, []byte(v)) {
					t.Errorf("value of %s found in the snapshot (redact=%v)", k, redact)
				}
			}
			for _, v := range []string{"never-looked-up-value", "UNRELATED_VAR", "hf_environsecret", "sk-cmdlinesecret", "hunter2secret", "PRIVATE KEY MATERIAL"} {
				if bytes.Contains(hay, []byte(v)) {
					t.Errorf("%q found in the snapshot (redact=%v)", v, redact)
				}
			}
		}
		s, err := Read(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(sortedKeys(secrets), s.Manifest.EnvWithheld); diff != "" {
			t.Errorf("env_withheld (-want +got):\n%s", diff)
		}
		rh := s.Host()
		if v, ok := rh.LookupEnv("HF_TOKEN"); !ok || v != WithheldValue {
			t.Errorf("replayed HF_TOKEN = %q, %v; want %q, true", v, ok, WithheldValue)
		}
		if _, ok := rh.LookupEnv("UNRELATED_VAR"); ok {
			t.Error("a variable nobody looked up replays as set")
		}
		got, _ := rh.FS.ReadFile("/proc/1/cmdline")
		if !bytes.Equal(got, cmdline) {
			t.Errorf("replayed cmdline %q, want the scrubbed %q", got, cmdline)
		}
	}
	if !bytes.Contains(cmdline, []byte("--epochs=3")) || !bytes.Contains(cmdline, []byte("--api-key="+WithheldValue)) {
		t.Errorf("scrubbed cmdline %q lost ordinary arguments or kept the key", cmdline)
	}
}

func TestRedactHostHidesIdentifiersConsistently(t *testing.T) {
	base := gpuHost(t, baseEnv())
	base.FS = addLink(t, base, "dev/disk/by-uuid/8c1f7a52-3b9e-4d21-9f0a-6e5d4c3b2a19", "../../sda1")
	rec := NewRecorder(base)
	h := rec.Host()
	runReport(t, h, readAllDriver{})
	h.FS.ReadDir("/dev/disk/by-uuid")
	h.FS.Readlink("/dev/disk/by-uuid/8c1f7a52-3b9e-4d21-9f0a-6e5d4c3b2a19")
	h.FS.ReadFile("/sys/class/dmi/id/board_serial")
	h.FS.ReadFile("/sys/class/dmi/id/product_uuid")
	h.FS.ReadFile("/etc/hostname")
	data := archiveBytes(t, rec, WriteOptions{RedactHost: true})
	raw := untar(t, data)
	for _, secret := range []string{"4e3f2a1b-9c8d", "4E3F2A1B", "7f1e2d3c", "8c1f7a52", gpuSerial, boardSN, "gpu-node-17"} {
		if bytes.Contains(bytes.ToLower(raw), bytes.ToLower([]byte(secret))) {
			t.Errorf("%q is still in the redacted snapshot", secret)
		}
	}
	s, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if s.Manifest.Hostname != RedactedHostname || !s.Manifest.Redacted {
		t.Errorf("hostname %q redacted=%v, want %q true", s.Manifest.Hostname, s.Manifest.Redacted, RedactedHostname)
	}
	rh := s.Host()
	ctx := context.Background()
	sysUUID, _ := rh.ReadString("/sys/bus/pci/devices/0000:00:04.0/uuid")
	env := rh.Getenv("CUDA_VISIBLE_DEVICES")
	smi, _ := rh.Runner.Run(ctx, "nvidia-smi", "-q")
	csv, _ := rh.Runner.Run(ctx, "nvidia-smi", "--query-gpu=uuid,serial", "--format=csv")
	nv, _ := rh.NVML.Query(ctx)
	boardSerial, _ := rh.ReadString("/sys/class/dmi/id/board_serial")
	hostname, _ := rh.ReadString("/etc/hostname")
	_, brokenErr := rh.Runner.Run(ctx, "broken-tool")

	want := "GPU-" + sysUUID
	if env != want {
		t.Errorf("CUDA_VISIBLE_DEVICES replays %q, want the sysfs placeholder %q", env, want)
	}
	for name, text := range map[string]string{"nvidia-smi -q": string(smi), "csv": string(csv), "nvml": string(nv)} {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks the same GPU placeholder %q:\n%s", name, want, text)
		}
		if !strings.Contains(text, "REDACTED-SERIAL-") {
			t.Errorf("%s lacks a serial placeholder:\n%s", name, text)
		}
	}
	if !strings.Contains(string(smi), "Board Part Number                     : N/A") {
		t.Errorf("an N/A value was redacted:\n%s", smi)
	}
	if !strings.HasPrefix(boardSerial, "REDACTED-SERIAL-") {
		t.Errorf("board_serial replays %q", boardSerial)
	}
	if hostname != RedactedHostname {
		t.Errorf("/etc/hostname replays %q", hostname)
	}
	if brokenErr == nil || !strings.Contains(brokenErr.Error(), "device "+RedactedHostname+" busy") {
		t.Errorf("error text not redacted: %v", brokenErr)
	}
	es, err := rh.FS.ReadDir("/dev/disk/by-uuid")
	if err != nil || len(es) != 1 {
		t.Fatalf("by-uuid listing: %v %v", es, err)
	}
	if _, err := rh.FS.Readlink("/dev/disk/by-uuid/" + es[0].Name()); err != nil {
		t.Errorf("the redacted entry name does not lead to its redacted link: %v", err)
	}
}

// addLink adds a symlink to a sysroot host's tree.
func addLink(t *testing.T, h *host.Host, name, target string) host.FS {
	t.Helper()
	root := string(h.FS.(host.DirFS))
	fakehost.WriteT(t, root, fakehost.Files{name: fakehost.Link(target)})
	return h.FS
}

func TestReplayAnswersMissingForWhatWasNotRecorded(t *testing.T) {
	rec := NewRecorder(gpuHost(t, baseEnv()))
	rec.Host().FS.ReadFile("/proc/cpuinfo")
	s, err := Read(bytes.NewReader(archiveBytes(t, rec, WriteOptions{})))
	if err != nil {
		t.Fatal(err)
	}
	h := s.Host()
	ctx := context.Background()
	if _, err := h.FS.ReadFile("/etc/hostname"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unrecorded file: %v, want fs.ErrNotExist", err)
	}
	if _, err := h.FS.Stat("/proc/cpuinfo"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unrecorded stat: %v, want fs.ErrNotExist", err)
	}
	if _, err := h.Runner.Run(ctx, "nvidia-smi"); !errors.Is(err, host.ErrNotFound) {
		t.Errorf("unrecorded program: %v, want host.ErrNotFound", err)
	}
	if _, err := h.Sysctl.Get("hw.memsize"); !errors.Is(err, host.ErrNotFound) {
		t.Errorf("unrecorded sysctl: %v, want host.ErrNotFound", err)
	}
	if h.NVML != nil {
		t.Error("a host whose NVML was never queried replays with NVML")
	}
	if h.OS != "linux" || h.Arch != "amd64" || h.Identity.UID != 1000 || h.Hostname != "gpu-node-17" {
		t.Errorf("host identity: %s/%s uid %d %q", h.OS, h.Arch, h.Identity.UID, h.Hostname)
	}
	if want := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC); !h.Now().Equal(want) {
		t.Errorf("replay clock %v, want %v", h.Now(), want)
	}
}

func TestRecordedErrorsReplayWithTheirKind(t *testing.T) {
	base := gpuHost(t, baseEnv())
	base.NVML = fakeNVML{err: errors.New("nvml: driver/library version mismatch")}
	rec := NewRecorder(base)
	h := rec.Host()
	ctx := context.Background()
	_, liveNVML := h.NVML.Query(ctx)
	_, liveMissing := h.FS.Stat("/dev/nvidia9")
	_, liveRun := h.Runner.Run(ctx, "amd-smi")
	s, err := Read(bytes.NewReader(archiveBytes(t, rec, WriteOptions{})))
	if err != nil {
		t.Fatal(err)
	}
	rh := s.Host()
	_, nvErr := rh.NVML.Query(ctx)
	_, missErr := rh.FS.Stat("/dev/nvidia9")
	_, runErr := rh.Runner.Run(ctx, "amd-smi")
	if nvErr == nil || nvErr.Error() != liveNVML.Error() {
		t.Errorf("NVML error %v, want %v", nvErr, liveNVML)
	}
	if !errors.Is(missErr, fs.ErrNotExist) || missErr.Error() != liveMissing.Error() {
		t.Errorf("missing stat %v, want %v", missErr, liveMissing)
	}
	if !errors.Is(runErr, host.ErrNotFound) || runErr.Error() != liveRun.Error() {
		t.Errorf("missing program %v, want %v", runErr, liveRun)
	}
}

func TestOpenNamesTheProblem(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "nope.tar.gz")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	p := filepath.Join(dir, "text.tar.gz")
	os.WriteFile(p, []byte("hello"), 0o644)
	if _, err := Open(p); err == nil || !strings.Contains(err.Error(), "not a gzip-compressed tar") {
		t.Errorf("not gzip: %v", err)
	}
}

func TestScrubFDLink(t *testing.T) {
	tests := []struct{ name, path, target, want string }{
		{"a device node held by a process is kept", "/proc/42/fd/7", "/dev/accel0", "/dev/accel0"},
		{"a user's file is withheld", "/proc/42/fd/3", "/home/ada/thesis.tex", WithheldValue},
		{"a socket is kept", "/proc/42/fd/4", "socket:[1234]", "socket:[1234]"},
		{"a link outside /proc/*/fd is kept", "/sys/bus/pci/devices/0000:00:04.0", "/home/x", "/home/x"},
		{"a thread's fd table is covered too", "/proc/42/task/43/fd/1", "/tmp/log", WithheldValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scrubFDLink(tt.path, tt.target); got != tt.want {
				t.Errorf("scrubFDLink(%q, %q) = %q, want %q", tt.path, tt.target, got, tt.want)
			}
		})
	}
}

// TestFixtureTreesRoundTrip records every driver over each fixture tree in
// testdata/hosts and checks that the replay gives the very same report.
func TestFixtureTreesRoundTrip(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/hosts/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		n++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			base, err := host.Local(host.LocalOptions{Sysroot: dir})
			if err != nil {
				t.Fatal(err)
			}
			base.Env = host.MapEnv{"HF_TOKEN": "hf_fixture_secret", "CUDA_VISIBLE_DEVICES": "0"}
			rec := NewRecorder(base)
			live := runReport(t, rec.Host(), drivers.All()...)
			data := archiveBytes(t, rec, WriteOptions{DevctlVersion: "test"})
			if bytes.Contains(untar(t, data), []byte("hf_fixture_secret")) {
				t.Error("a secret variable landed in the snapshot")
			}
			s, err := Read(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(live, runReport(t, s.Host(), drivers.All()...)); diff != "" {
				t.Errorf("replayed report differs (-live +replay):\n%s", diff)
			}
		})
		t.Run(filepath.Base(dir)+"/doctor", func(t *testing.T) {
			base, err := host.Local(host.LocalOptions{Sysroot: dir})
			if err != nil {
				t.Fatal(err)
			}
			base.Env = host.MapEnv{"CUDA_VISIBLE_DEVICES": "0"}
			rec := NewRecorder(base)
			live := runDoctor(t, rec.Host())
			s, err := Read(bytes.NewReader(archiveBytes(t, rec, WriteOptions{})))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(live, runDoctor(t, s.Host())); diff != "" {
				t.Errorf("replayed doctor findings differ (-live +replay):\n%s", diff)
			}
		})
	}
	if n == 0 {
		t.Skip("no fixture trees in testdata/hosts yet")
	}
}

// runDoctor probes h and runs every doctor check on it, durations zeroed:
// what `devctl doctor` would show.
func runDoctor(t *testing.T, h *host.Host) []doctor.Result {
	t.Helper()
	rep, outcomes, err := probe.Run(context.Background(), h, drivers.All(), probe.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	env := &doctor.Env{Host: h, Report: rep, Outcomes: outcomes}
	rs := doctor.RenderAll(doctor.Run(context.Background(), doctor.All(), env, doctor.Options{Timeout: 10 * time.Second}), doctor.English)
	for i := range rs {
		rs[i].DurationMS = 0
	}
	return rs
}

func TestRedactingAShortHostnameKeepsPaths(t *testing.T) {
	base := fixtureHost(t, map[string]string{
		"proc/sys/vm/overcommit_memory": "0\n",
		"etc/hostname":                  "vm\n",
		"proc/mounts":                   "none /vm tmpfs rw 0 0\nsvm vmx\n",
	}, host.MapEnv{})
	base.Hostname = "vm"
	rec := NewRecorder(base)
	h := rec.Host()
	for _, p := range []string{"/proc/sys/vm/overcommit_memory", "/etc/hostname", "/proc/mounts"} {
		if _, err := h.FS.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Read(bytes.NewReader(archiveBytes(t, rec, WriteOptions{RedactHost: true})))
	if err != nil {
		t.Fatal(err)
	}
	rh := s.Host()
	if v, err := rh.ReadString("/proc/sys/vm/overcommit_memory"); err != nil || v != "0" {
		t.Errorf("/proc/sys/vm/overcommit_memory replays %q, %v", v, err)
	}
	if v, _ := rh.ReadString("/etc/hostname"); v != RedactedHostname {
		t.Errorf("/etc/hostname replays %q", v)
	}
	if v, _ := rh.ReadString("/proc/mounts"); v != "none /"+RedactedHostname+" tmpfs rw 0 0\nsvm vmx" {
		t.Errorf("/proc/mounts replays %q: only whole tokens may be replaced", v)
	}
}
