package kernlog

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/host"
)

// Real kernel log excerpts (verbatim, from the named public threads).
const (
	// https://github.com/doitsujin/dxvk/issues/1027 (pshe94, 2019-08-03)
	dxvk = `[31543.449440] NVRM: GPU at PCI:0000:01:00: GPU-8a47641b-dff6-f09f-618c-c3eb58fb430d
[31543.449443] NVRM: Xid (PCI:0000:01:00): 31, Ch 0000003a, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_3 faulted @ 0x17_00592000. Fault is of type FAULT_PDE ACCESS_TYPE_READ
[31609.615230] NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception: Class 0x0 Subchannel 0x0 Mismatch
[31609.615231] NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception: ESR 0x4041b0=0x0
[31609.615516] NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000052 intr 02000000
`
	// https://github.com/NVIDIA/NVSentinel/issues/155 (lalitadithya, 2025-10-25)
	fallen = `[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0
               NVRM: (PCI ID: 10de:26b5) installed in this system has
               NVRM: fallen off the bus and is not responding to commands.
[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).
[ 1843.439669] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release Build  (dvs-builder@U22-I3-B10-02-5)  Mon Jun  2 13:13:04 UTC 2025
`
	// https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1150 (jed-hacker), journal form
	journal = `kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149
`
	// https://github.com/ROCm/TheRock/issues/1271 (dattrax)
	amd = `[ 1008.330834] amdgpu 0000:c2:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32773)
[ 1008.330841] amdgpu 0000:c2:00.0: amdgpu:  Process python pid 5578 thread python pid 5578
[ 1008.330844] amdgpu 0000:c2:00.0: amdgpu: GCVM_L2_PROTECTION_FAULT_STATUS:0x00801031
[ 1008.330858] amdgpu 0000:c2:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32773)
`
)

func TestParseJoinsContinuationLines(t *testing.T) {
	got := Parse([]byte(fallen))
	if len(got) != 3 {
		t.Fatalf("got %d lines, want 3: %+v", len(got), got)
	}
	want := "NVRM: The NVIDIA GPU 0000:b3:00.0 NVRM: (PCI ID: 10de:26b5) installed in this system has NVRM: fallen off the bus and is not responding to commands."
	if got[0].Text != want || got[0].Time != 1843.308145 {
		t.Errorf("got %+v", got[0])
	}
}

func TestParseStampForms(t *testing.T) {
	for _, in := range []string{
		"[ 12.5] NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.\n",
		"Feb 14 05:03:41 gpu-1 kernel: NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.\n",
		"3,1234,12500000,-;NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.\n SUBSYSTEM=pci\n DEVICE=+pci:0000:01:00.0\n",
	} {
		got := Parse([]byte(in))
		if len(got) != 1 || got[0].Text != "NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus." {
			t.Errorf("Parse(%q) = %+v", in, got)
		}
	}
}

type row struct {
	Source, Device string
	Xid            int
	Severity       string
	Count          int
}

func rows(es []Event) []row {
	var out []row
	for _, e := range es {
		out = append(out, row{e.Source, e.Device, e.Xid, e.Severity, e.Count})
	}
	return out
}

func TestEventsOnRealLogs(t *testing.T) {
	tests := []struct {
		name  string
		log   string
		accel map[string]bool
		want  []row
	}{
		{"Xid 31 and 13 are application errors, 32 a driver one; repeats are counted", dxvk, nil, []row{
			{"nvidia", "0000:01:00.0", 31, SevApplication, 1},
			{"nvidia", "0000:01:00.0", 13, SevApplication, 2},
			{"nvidia", "0000:01:00.0", 32, SevDriver, 1},
		}},
		{"a GPU fallen off the bus without an Xid line is Xid 79, hardware", fallen, nil, []row{
			{"nvidia", "0000:b3:00.0", 79, SevHardware, 1},
		}},
		{"the journal form", journal, nil, []row{{"nvidia", "0000:dc:00.0", 45, SevApplication, 1}}},
		{"amdgpu page faults, repeated", amd, nil, []row{{"amdgpu", "0000:c2:00.0", 0, SevApplication, 2}}},
		// Synthetic: an error line naming a TPU chip's address behind vfio-pci.
		{"an error line that names an accelerator's address counts", "[ 5.0] vfio-pci 0000:00:04.0: timed out waiting for pending transaction\n[ 5.1] vfio-pci 0000:00:05.0: enabling device\n",
			map[string]bool{"0000:00:04.0": true, "0000:00:05.0": true}, []row{{"vfio-pci", "0000:00:04.0", 0, SevDriver, 1}}},
		{"the same line naming another device does not", "[ 5.0] vfio-pci 0000:00:04.0: timed out\n", map[string]bool{"0000:3b:00.0": true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rows(Events(Parse([]byte(tt.log)), tt.accel))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func FuzzParseAndClassify(f *testing.F) {
	f.Add([]byte(dxvk))
	f.Add([]byte(fallen))
	f.Add([]byte(amd))
	f.Add([]byte("3,1,2,-;x\n A=b\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, e := range Events(Parse(b), map[string]bool{"0000:00:04.0": true}) {
			if len(e.Example) > MaxExample+len("…") {
				t.Fatalf("example of %d bytes", len(e.Example))
			}
		}
	})
}

type fakeRunner struct {
	out map[string]string
	err map[string]error
}

func (f fakeRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	k := name
	if len(args) > 0 {
		k += " args"
	}
	return []byte(f.out[k]), f.err[k]
}
func (f fakeRunner) LookPath(name string) (string, error) { return "/bin/" + name, nil }

func TestRead(t *testing.T) {
	tests := []struct {
		name     string
		runner   fakeRunner
		readable bool
		why      string
		events   int
	}{
		{"util-linux dmesg with the level filter", fakeRunner{out: map[string]string{"dmesg args": dxvk}}, true, "", 3},
		{"busybox dmesg refuses the options: the whole buffer is read", fakeRunner{
			out: map[string]string{"dmesg args": "dmesg: unrecognized option '--kernel'\n", "dmesg": fallen},
			err: map[string]error{"dmesg args": errExit}}, true, "", 1},
		{"a non-root user on a restricted kernel gets the reason", fakeRunner{
			out: map[string]string{"dmesg args": "dmesg: read kernel buffer failed: Operation not permitted\n"},
			err: map[string]error{"dmesg args": errExit}}, false, "the kernel log is not readable by uid 1000 (kernel.dmesg_restrict = unknown): reading it needs root or CAP_SYSLOG", 0},
		{"no dmesg (a replayed tree)", fakeRunner{err: map[string]error{"dmesg args": host.ErrNotAllowed}}, false, "dmesg is not available here (replayed tree, or not installed)", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &host.Host{OS: "linux", Runner: tt.runner, FS: host.DirFS(t.TempDir()), Identity: host.Identity{UID: 1000}}
			l := Read(context.Background(), h)
			if l.Readable != tt.readable || l.Why != tt.why || len(l.Events) != tt.events {
				t.Errorf("got readable=%v why=%q events=%d", l.Readable, l.Why, len(l.Events))
			}
		})
	}
}

var errExit = errorString("exit status 1")

type errorString string

func (e errorString) Error() string { return string(e) }
