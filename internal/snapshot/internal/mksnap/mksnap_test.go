package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	snapshotcmd "github.com/devctl/devctl/internal/cmd/snapshot"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/snapshot"
)

// fixtures is the repository's testdata directory, seen from this package.
var fixtures = filepath.Join("..", "..", "..", "..", "testdata")

// maxArchive keeps fixture snapshots small enough to read in a diff.
const maxArchive = 16 << 10

// probeJSON renders a report the way `probe -o json` does, without the
// timings that differ between runs.
func probeJSON(t *testing.T, rep *probe.Report) string {
	t.Helper()
	if rep == nil {
		return "null"
	}
	r := *rep
	r.Drivers = append([]probe.DriverStatus(nil), rep.Drivers...)
	for i := range r.Drivers {
		r.Drivers[i].DurationMS = 0
	}
	b, err := json.MarshalIndent(&r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// doctorJSON renders check results the way `doctor -o json` does, without
// their timings.
func doctorJSON(t *testing.T, os []doctor.Outcome) string {
	t.Helper()
	rs := doctor.RenderAll(os, doctor.English)
	for i := range rs {
		rs[i].DurationMS = 0
	}
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func build(t *testing.T, m Machine) *Recording {
	t.Helper()
	h, err := m.Build(fixtures)
	if err != nil {
		t.Fatalf("building %s: %v", m.Name, err)
	}
	r, err := Record(context.Background(), h, false)
	if err != nil {
		t.Fatalf("recording %s: %v", m.Name, err)
	}
	return r
}

// TestReplayGivesTheRecordedReports is the promise of --from: the probe
// report and every doctor finding replayed from a snapshot are the ones
// the recording run saw, for every device family.
func TestReplayGivesTheRecordedReports(t *testing.T) {
	for _, m := range Machines {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			r := build(t, m)
			s, err := snapshot.Read(bytes.NewReader(r.Archive))
			if err != nil {
				t.Fatalf("reading the archive back: %v", err)
			}
			// One Host for the probe and the checks, as devctl --from has:
			// drivers' answers are kept per Host (nvidia.Answers).
			h := s.Host()
			f := Factory(h)
			rep, outcomes, err := cmdutil.RunProbe(context.Background(), f, nil)
			if err != nil && rep == nil {
				t.Fatalf("replayed probe: %v", err)
			}
			if diff := cmp.Diff(probeJSON(t, r.Report), probeJSON(t, rep)); diff != "" {
				t.Errorf("replayed probe report differs (-recorded +replayed):\n%s", diff)
			}
			cfg, cfgErr := f.Config()
			env := &doctor.Env{Host: h, Report: rep, Outcomes: outcomes, Config: cfg, ConfigErr: cfgErr}
			checks := doctor.Run(context.Background(), doctor.All(), env, doctor.Options{Timeout: Timeout})
			if diff := cmp.Diff(doctorJSON(t, r.Checks), doctorJSON(t, checks)); diff != "" {
				t.Errorf("replayed doctor findings differ (-recorded +replayed):\n%s", diff)
			}
		})
	}
}

// TestGenerationIsReproducible: the same fixtures give the same bytes, so
// regenerating shows a diff only when a driver reads something new.
func TestGenerationIsReproducible(t *testing.T) {
	for _, m := range Machines {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			var archives [2][]byte
			for i := range archives {
				h, err := m.Build(fixtures)
				if err != nil {
					t.Fatal(err)
				}
				r, err := Record(context.Background(), h, true)
				if err != nil {
					t.Fatal(err)
				}
				archives[i] = r.Archive
			}
			if !bytes.Equal(archives[0], archives[1]) {
				t.Errorf("two recordings of %s differ", m.Name)
			}
			if n := len(archives[0]); n > maxArchive {
				t.Errorf("%s is %d bytes, want at most %d: record fewer files", m.Name, n, maxArchive)
			}
		})
	}
}

// TestRecordIsWhatTheSnapshotCommandWrites keeps the generator honest: its
// archives are byte for byte what `devctl snapshot --redact-host` writes on
// the same host.
func TestRecordIsWhatTheSnapshotCommandWrites(t *testing.T) {
	dir := t.TempDir()
	for _, m := range Machines {
		t.Run(m.Name, func(t *testing.T) {
			h, err := m.Build(fixtures)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Record(context.Background(), h, true)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, m.Name+".tar.gz")
			f := Factory(h)
			f.Global.ConfigFlags = map[string]config.Flag{}
			cmd := snapshotcmd.NewCmdSnapshot(f, nil)
			cmd.SetArgs([]string{"-o", out, "--redact-host"})
			if err := cmd.ExecuteContext(context.Background()); err != nil {
				t.Fatalf("devctl snapshot: %v", err)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(r.Archive, got) {
				t.Errorf("mksnap wrote %d bytes, devctl snapshot %d: the two recordings differ", len(r.Archive), len(got))
			}
		})
	}
}

// TestRedactedArchivesHoldNoHostIdentifiers checks what --redact-host
// promises on the fixture machines: no hostname, no NVML UUID.
func TestRedactedArchivesHoldNoHostIdentifiers(t *testing.T) {
	for _, m := range Machines {
		t.Run(m.Name, func(t *testing.T) {
			h, err := m.Build(fixtures)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Record(context.Background(), h, true)
			if err != nil {
				t.Fatal(err)
			}
			s, err := snapshot.Read(bytes.NewReader(r.Archive))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Manifest.Hostname; got != snapshot.RedactedHostname {
				t.Errorf("hostname %q, want %q", got, snapshot.RedactedHostname)
			}
			rh := s.Host()
			if rh.NVML != nil {
				b, err := rh.NVML.Query(context.Background())
				if err == nil && strings.Contains(string(b), "GPU-4f6b") {
					t.Errorf("NVML answer still holds a fixture UUID")
				}
			}
		})
	}
}

func TestParseSysctlText(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]string
		wantErr string
	}{
		{"name: value lines become answers", "hw.memsize: 17179869184\nmachdep.cpu.brand_string: Apple M4\n",
			map[string]string{"hw.memsize": "17179869184", "machdep.cpu.brand_string": "Apple M4"}, ""},
		{"a value keeps its inner colons and spaces", "kern.version: Darwin Kernel Version 24.1.0: Thu Oct 10\n",
			map[string]string{"kern.version": "Darwin Kernel Version 24.1.0: Thu Oct 10"}, ""},
		{"blank lines and comments are skipped", "\n# recorded on an M1\n\nhw.optional.arm64: 1\n",
			map[string]string{"hw.optional.arm64": "1"}, ""},
		{"the first answer for a name wins", "hw.ncpu: 8\nhw.ncpu: 10\n", map[string]string{"hw.ncpu": "8"}, ""},
		{"an empty value is kept", "iogpu.wired_limit_mb:\n", map[string]string{"iogpu.wired_limit_mb": ""}, ""},
		{"a line without a colon is refused", "hw.ncpu 8\n", nil, `line 1: want "name: value"`},
		{"a name with spaces is refused", "hw ncpu: 8\n", nil, "line 1"},
		{"an empty name is refused", "\n: 8\n", nil, "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSysctlText([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseSysctlText(f *testing.F) {
	for _, name := range []string{"sysctl-m4-macos15.txt", "sysctl-m1-rosetta-macos13.txt", "sysctl-intel-amd-macos14.txt"} {
		if b, err := os.ReadFile(filepath.Join(fixtures, "accel", "mac", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("a:\n:b\n# c\n\x00: d"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseSysctlText(b)
		if err != nil {
			return
		}
		for k := range m {
			if k == "" || strings.ContainsAny(k, " \t") {
				t.Errorf("bad name %q accepted", k)
			}
		}
	})
}

func TestSelectMachines(t *testing.T) {
	got, err := selectMachines("tpu-v6e-8, mac-m4-macos15.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "tpu-v6e-8" || got[1].Name != "mac-m4-macos15" {
		t.Errorf("selected %v", got)
	}
	if _, err := selectMachines("tpu-v9"); err == nil || !strings.Contains(err.Error(), `unknown machine "tpu-v9"`) {
		t.Errorf("error %v, want an unknown machine", err)
	}
}

// TestCheckReportsDrift runs the generator's -check mode against an empty
// directory: every archive is missing, nothing is written.
func TestCheckReportsDrift(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"-fixtures", fixtures, "-out", dir, "-check", "-only", "neuron-inf2-ena"}, &out, &errb)
	if code != 1 || !strings.Contains(out.String(), "neuron-inf2-ena.tar.gz: missing") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Errorf("-check wrote %d files", len(es))
	}
	out.Reset()
	if code := run([]string{"-fixtures", fixtures, "-out", dir, "-only", "neuron-inf2-ena"}, &out, &errb); code != 0 {
		t.Fatalf("writing: exit %d, %s", code, errb.String())
	}
	out.Reset()
	if code := run([]string{"-fixtures", fixtures, "-out", dir, "-check", "-only", "neuron-inf2-ena"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "up to date") {
		t.Errorf("exit %d after writing, stdout %q", code, out.String())
	}
}
