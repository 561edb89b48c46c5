package recommend

import (
	"errors"
	"strings"
	"testing"
)

func TestSplitDeviceCount(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		rest string
	}{
		{"2x RTX 3090", 2, "RTX 3090"},
		{"8xH100", 8, "H100"},
		{"4 × A100 80GB", 4, "A100 80GB"},
		{"2*3090", 2, "3090"},
		{"rtx-3090", 0, "rtx-3090"},
		{"rx-7900-xtx", 0, "rx-7900-xtx"},
		{"0x a100", 0, "0x a100"},
		{"x4", 0, "x4"},
	} {
		n, rest := SplitDeviceCount(c.in)
		if n != c.n || rest != c.rest {
			t.Errorf("SplitDeviceCount(%q) = %d, %q; want %d, %q", c.in, n, rest, c.n, c.rest)
		}
	}
}

func TestDeviceCore(t *testing.T) {
	for _, c := range []struct {
		in   string
		core string
		mem  float64
	}{
		{"NVIDIA A100-SXM4-80GB", "a100", 80},
		{"A100 80G", "a100", 80},
		{"a100-pcie-40gb", "a100", 40},
		{"RTX 4060 Ti 16 GB", "4060ti", 16},
		{"rtx4090", "4090", 0},
		{"apple-m2-max-96gb", "m2max", 96},
		{"Quadro RTX 6000", "quadro6000", 0},
		{"rtx-6000-ada", "6000ada", 0},
		{"Intel(R) Data Center GPU Max 1550", "max1550", 0},
		{"AMD Radeon RX 7900 XTX", "7900xtx", 0},
		{"h100-nvl", "h100nvl", 0},
		{"Tesla V100-SXM2-32GB", "v100", 32},
		{"", "", 0},
	} {
		core, mem := deviceCore(c.in)
		if core != c.core || mem != c.mem {
			t.Errorf("deviceCore(%q) = %q, %g; want %q, %g", c.in, core, mem, c.core, c.mem)
		}
	}
}

func TestResolveDeviceAsPeopleWriteIt(t *testing.T) {
	list, err := builtinDevices()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in, want string
		mem      int64 // a resize, in GiB
	}{
		{"h100", "h100-80gb", 0},
		{"H100 80GB HBM3", "h100-80gb", 0},
		{"A100-80G", "a100-80gb", 0},
		{"A100 40GB PCIe", "a100-40gb", 0},
		{"RTX 3090 24GB", "rtx-3090", 0},
		{"3090", "rtx-3090", 0},
		{"T4 16GB", "t4", 0},
		{"4060 Ti 16GB", "rtx-4060-ti-16gb", 0},
		{"M2 Max 96GB", "apple-m2-max-96gb", 0},
		{"7900 XTX", "rx-7900-xtx", 0},
		{"RTX 4090 48GB", "rtx-4090", 48},
		{"M3 Max 64GB", "apple-m3-max-128gb", 64},
	} {
		ref, ok, err := ResolveDevice(list, c.in)
		if err != nil || !ok || ref.Device.Name != c.want || ref.Memory != c.mem<<30 {
			t.Errorf("ResolveDevice(%q) = %s (%d GiB), %v, %v; want %s (%d GiB)", c.in, ref.Device.Name, ref.Memory>>30, ok, err, c.want, c.mem)
		}
	}
	for _, in := range []string{"a100", "V100", "rtx 3060", "M4 Pro", "apple-m3-max", "gh200"} {
		_, ok, err := ResolveDevice(list, in)
		if ok || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "GB") {
			t.Errorf("ResolveDevice(%q): ok %v, err %v; want an input error naming the memory sizes", in, ok, err)
		}
	}
	for _, in := range []string{"A100 80GB 40GB", "RTX 3090 0GB"} {
		if _, ok, err := ResolveDevice(list, in); ok || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "one memory size") {
			t.Errorf("ResolveDevice(%q): ok %v, err %v; want an input error about the memory", in, ok, err)
		}
	}
	for _, in := range []string{"rtx 6000", "MI300", "7900"} {
		if _, ok, err := ResolveDevice(list, in); ok || !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "more than one chip") {
			t.Errorf("ResolveDevice(%q): ok %v, err %v; want an input error naming the chips", in, ok, err)
		}
	}
	if ref, ok, err := ResolveDevice(list, "B580"); !ok || err != nil || ref.Device.Name != "intel-arc-b580" {
		t.Errorf("ResolveDevice(B580) = %s, %v, %v; want intel-arc-b580", ref.Device.Name, ok, err)
	}
	for _, in := range []string{"laptop", "cuda:1", "24GiB", "", "max", "rtx"} {
		if ref, ok, err := ResolveDevice(list, in); ok || err != nil {
			t.Errorf("ResolveDevice(%q) = %s, %v, %v; want no chip", in, ref.Device.Name, ok, err)
		}
	}
}

// TestResolveDeviceOnReportedNames reads every device name the memory
// corpus's reporters wrote (testdata/memory/devices.tsv: 800 names from
// issue threads, model cards and benchmark tables, each mapped by hand to
// its catalogue entry or its memory size). A name may stay unresolved or
// ambiguous, but one that resolves must find the hand-mapped entry or one
// of the same memory and backend: a wrong silent match would plan for the
// wrong card.
func TestResolveDeviceOnReportedNames(t *testing.T) {
	list, err := builtinDevices()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]CatalogDevice{}
	for _, d := range list {
		byName[d.Name] = d
	}
	var mapped, resolved, ambiguous int
	for _, r := range readTSV(t, "devices.tsv") {
		raw, want := r["raw"], r["device"]
		if raw == "" || strings.ContainsAny(want, ":") || want == "skip" {
			continue
		}
		wd, known := byName[want]
		if !known {
			continue
		}
		mapped++
		_, name := SplitDeviceCount(raw)
		ref, ok, err := ResolveDevice(list, name)
		switch {
		case err != nil:
			ambiguous++
			continue
		case !ok:
			continue
		}
		resolved++
		got := ref.Device.TotalGiB
		if ref.Memory > 0 {
			got = float64(ref.Memory) / (1 << 30)
		}
		if ref.Device.Backend != wd.Backend || !sameMemory(got, wd.TotalGiB) {
			t.Errorf("%q: resolved to %s (%.0f GiB), hand-mapped to %s (%.0f GiB)", raw, ref.Device.Name, got, want, wd.TotalGiB)
		}
	}
	t.Logf("devices.tsv: %d names mapped to catalogue entries, %d resolve by name, %d are ambiguous without their memory", mapped, resolved, ambiguous)
}

func TestCatalogueDeviceLeavesThisMachinesNames(t *testing.T) {
	for _, in := range []string{"cpu", "cuda", "cuda:1", "mps", "rocm", "xpu"} {
		if ref, ok, err := CatalogueDevice(in); ok || err != nil {
			t.Errorf("CatalogueDevice(%q) = %s, %v, %v; want this machine's device", in, ref.Device.Name, ok, err)
		}
	}
	if ref, ok, err := CatalogueDevice("24GiB"); !ok || err != nil || ref.Device.TotalGiB != 24 {
		t.Errorf("CatalogueDevice(24GiB) = %+v, %v, %v", ref, ok, err)
	}
}

func FuzzResolveDevice(f *testing.F) {
	list, err := builtinDevices()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"2x RTX 3090", "A100-80G", "M2 Max 96GB", "a100", "16384MiB T4", "1e400gb h100", "99999999999999999999gb h100", "rtx", "..", "9999999999x a100"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, rest := SplitDeviceCount(s)
		ref, ok, err := ResolveDevice(list, rest)
		if ok && (ref.Device.Name == "" || err != nil || ref.Memory < 0) {
			t.Fatalf("ResolveDevice(%q) = %+v, %v, %v", rest, ref, ok, err)
		}
		if err != nil && !errors.Is(err, ErrInput) {
			t.Fatalf("ResolveDevice(%q): %v is not an input error", rest, err)
		}
	})
}
