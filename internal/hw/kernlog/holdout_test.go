package kernlog

import "testing"

// holdout are real kernel log lines from threads that were NOT used to write
// the patterns (those came from dxvk#1027, NVSentinel#155,
// open-gpu-kernel-modules#1150 and ROCm/TheRock#1271). Each names the
// event it must yield; the test reports how many it gets right.
var holdout = []struct {
	source, line string
	wantSource   string
	wantXid      int
	wantSev      string
}{
	// https://github.com/madMAx43v3r/chia-gigahorse/issues/301 (cdgraff)
	{"chia-gigahorse#301", "[14328.198504] NVRM: Xid (PCI:0000:0a:00): 31, pid=13332, name=cuda_plot_k32_v, Ch 00000010, intr 00000000. MMU Fault: ENGINE CE2 HUBCLIENT_CE0 faulted @ 0x7f29_5b8c9000. Fault is of type FAULT_PRIV_VIOLATION ACCESS_TYPE_VIRT_READ", "nvidia", 31, SevApplication},
	{"chia-gigahorse#301", "[14370.687545] NVRM: Xid (PCI:0000:0a:00): 62, pid='<unknown>', name=<unknown>, 2023b230 20238a3a 2023e8b6 2023eac4 2023ec3c 2023ea86 00000000 00000000", "nvidia", 62, SevDriver},
	{"chia-gigahorse#301", "[14370.688139] NVRM: Xid (PCI:0000:0a:00): 45, pid='<unknown>', name=<unknown>, Ch 00000008", "nvidia", 45, SevApplication},
	// https://github.com/NVIDIA/open-gpu-kernel-modules/issues/363 (birdie-github)
	{"open-gpu-kernel-modules#363", "NVRM: Xid (PCI:0000:08:00): 31, pid=169800, name=chrome, Ch 00000023, intr 00000000. MMU Fault: ENGINE CE0 HUBCLIENT_HSCE0 faulted @ 0x0_0abe0000. Fault is of type FAULT_PTE ACCESS_TYPE_VIRT_READ", "nvidia", 31, SevApplication},
	// https://github.com/leptonai/gpud/pull/1174 (gyuho): kmsg inputs of its tests
	{"gpud#1174", "NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3, Contained ECC error", "nvidia", 94, SevHardware},
	{"gpud#1174", "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)", "nvidia", 145, SevDriver},
	// https://github.com/NVIDIA/NVSentinel/issues/155 (a comment quoting another form)
	{"NVSentinel#155 comment", "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus", "nvidia", 79, SevHardware},
	// https://github.com/ROCm/amdgpu/issues/150 (kotee4ko)
	{"ROCm/amdgpu#150", "[282248.294764] amdgpu 0000:88:00.0: amdgpu: [mmhub0] no-retry page fault (src_id:0 ring:24 vmid:8 pasid:32768, for process ipython3 pid 846049 thread ipython3 pid 846049)", "amdgpu", 0, SevApplication},
	// https://github.com/ROCm/amdgpu/issues/172 (iratebadger)
	{"ROCm/amdgpu#172", "[ 4778.915423] amdgpu 0000:c6:00.0: amdgpu: [gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:3 pasid:32769)", "amdgpu", 0, SevApplication},
	// https://github.com/ROCm/legacy-rocm-build/issues/2205 (geohot)
	{"legacy-rocm-build#2205", "[  196.550067] amdgpu 0000:c3:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:12 pasid:32773, for process rocm-bandwidth- pid 8285 thread rocm-bandwidth- pid 8285)", "amdgpu", 0, SevApplication},
	// https://github.com/pop-os/cosmic-greeter/issues/344 (AnomalRoil), journal form
	{"cosmic-greeter#344", "nov 04 13:30:18 odys25 kernel: amdgpu 0000:0d:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:3 pasid:32770)", "amdgpu", 0, SevApplication},
	// https://github.com/QubesOS/qubes-issues/issues/7648 (Rot127), indented journal form
	{"qubes-issues#7648", "    Jul 23 05:38:28 dom0 kernel: amdgpu 0000:04:00.0: amdgpu: [gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:1 pasid:32770, for process Xorg pid 9214 thread X:cs0 pid 9235)", "amdgpu", 0, SevApplication},
}

func TestHoldoutAccuracy(t *testing.T) {
	right := 0
	for _, h := range holdout {
		es := Events(Parse([]byte(h.line+"\n")), nil)
		ok := len(es) == 1 && es[0].Source == h.wantSource && es[0].Xid == h.wantXid && es[0].Severity == h.wantSev
		if ok {
			right++
		} else {
			t.Logf("MISS %s: %q -> %+v", h.source, h.line, es)
		}
	}
	t.Logf("holdout: %d/%d lines classified right", right, len(holdout))
	if right*10 < len(holdout)*8 {
		t.Errorf("holdout accuracy %d/%d is under 80%%", right, len(holdout))
	}
}
