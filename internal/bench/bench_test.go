package bench

import (
	"context"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

func TestPlanChoosesTheWidestISAPerPrecision(t *testing.T) {
	tests := []struct {
		name string
		arch string
		f    Features
		want []string
	}{
		{"an AVX-512 CPU with BF16 and VNNI runs all four zmm kernels", "amd64",
			Features{AVX: true, FMA: true, AVX2: true, AVX512F: true, AVX512BF16: true, AVX512VNNI: true},
			[]string{"fma_fp32/avx512f", "fma_fp64/avx512f", "dot_bf16/avx512_bf16", "dot_int8/avx512_vnni"}},
		{"an AVX-512 CPU without BF16 skips the bf16 dot product", "amd64",
			Features{AVX: true, FMA: true, AVX2: true, AVX512F: true, AVX512VNNI: true},
			[]string{"fma_fp32/avx512f", "fma_fp64/avx512f", "dot_int8/avx512_vnni"}},
		{"an AVX2 CPU runs the FMA3 ymm kernels", "amd64",
			Features{AVX: true, FMA: true, AVX2: true},
			[]string{"fma_fp32/fma3-avx2", "fma_fp64/fma3-avx2"}},
		{"an x86 CPU without FMA falls back to Go", "amd64",
			Features{AVX: true},
			[]string{"fma_fp32/go", "fma_fp64/go"}},
		{"BF16 without AVX-512F (impossible, but) runs no zmm kernel", "amd64",
			Features{FMA: true, AVX2: true, AVX512BF16: true},
			[]string{"fma_fp32/fma3-avx2", "fma_fp64/fma3-avx2"}},
		{"an arm64 CPU with ASIMD runs NEON", "arm64", Features{ASIMD: true},
			[]string{"fma_fp32/neon", "fma_fp64/neon"}},
		{"another architecture runs the Go fallback", "riscv64", Features{},
			[]string{"fma_fp32/go", "fma_fp64/go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Plan(tt.arch, tt.f)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			for _, id := range got {
				if _, ok := SpecByID(id); !ok {
					t.Errorf("planned %s has no spec", id)
				}
			}
		})
	}
}

func TestKernelsOnlyReturnsWhatThisCPUCanRun(t *testing.T) {
	ks := Kernels(HostPlan())
	if len(ks) < 2 {
		t.Fatalf("host plan gave %d kernels", len(ks))
	}
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	for _, k := range Kernels(Plan(other, Features{AVX: true, FMA: true, AVX2: true, AVX512F: true, AVX512BF16: true, AVX512VNNI: true, ASIMD: true})) {
		if k.Spec.ISA != ISAGo && !strings.Contains(k.Spec.ID, runtimeISAHint()) {
			if err := k.Check(); err != nil {
				t.Errorf("%s was offered but fails: %v", k.Spec.ID, err)
			}
		}
	}
}

func runtimeISAHint() string {
	if runtime.GOARCH == "arm64" {
		return ISANEON
	}
	return "avx"
}

func TestPeakArithmetic(t *testing.T) {
	spec := func(id string) KernelSpec { s, _ := SpecByID(id); return s }
	zen5 := CPUID{Vendor: "AuthenticAMD", Family: 0x1A}
	tests := []struct {
		name string
		id   string
		cpu  CPUID
		goos string
		want float64 // ops per cycle per core; 0 = unknown
	}{
		{"Intel AVX2 fp32 is 2 units x 8 lanes x 2", "fma_fp32/fma3-avx2", CPUID{Vendor: "GenuineIntel"}, "linux", 32},
		{"Intel AVX2 fp64 is half of fp32", "fma_fp64/fma3-avx2", CPUID{Vendor: "GenuineIntel"}, "linux", 16},
		{"Zen 1 has one 256-bit FMA per cycle", "fma_fp32/fma3-avx2", CPUID{Vendor: "AuthenticAMD", Family: 0x17, Model: 1}, "linux", 16},
		{"Zen 2 has two", "fma_fp32/fma3-avx2", CPUID{Vendor: "AuthenticAMD", Family: 0x17, Model: 0x31}, "linux", 32},
		{"Zen 2 starts at family 17h model 30h", "fma_fp32/fma3-avx2", CPUID{Vendor: "AuthenticAMD", Family: 0x17, Model: 0x30}, "linux", 32},
		{"Zen 3 and Zen 4 (family 19h) have two 256-bit FMA units", "fma_fp32/fma3-avx2", CPUID{Vendor: "AuthenticAMD", Family: 0x19, Model: 0x21}, "linux", 32},
		{"a Hygon Dhyana is a Zen 1 core with one FMA per cycle", "fma_fp32/fma3-avx2", CPUID{Vendor: "HygonGenuine", Family: 0x18}, "linux", 16},
		{"Zen 4 double-pumps AVX-512", "fma_fp32/avx512f", CPUID{Vendor: "AuthenticAMD", Family: 0x19}, "linux", 32},
		{"Zen 5 fp32 AVX-512 is 64", "fma_fp32/avx512f", zen5, "linux", 64},
		{"Zen 5 bf16 dot is 2 x 16 lanes x 4", "dot_bf16/avx512_bf16", zen5, "linux", 128},
		{"Zen 5 int8 VNNI is 2 x 16 lanes x 8", "dot_int8/avx512_vnni", zen5, "linux", 256},
		{"Intel AVX-512 assumes two units", "fma_fp64/avx512f", CPUID{Vendor: "GenuineIntel"}, "linux", 32},
		{"Apple NEON has four pipes", "fma_fp32/neon", CPUID{}, "darwin", 32},
		{"Neoverse N1 has two pipes", "fma_fp64/neon", CPUID{Implementer: 0x41, Part: 0xd0c}, "linux", 8},
		{"Neoverse V1 has four pipes", "fma_fp64/neon", CPUID{Implementer: 0x41, Part: 0xd40}, "linux", 16},
		{"an Apple core under Linux (implementer 0x61) has four pipes", "fma_fp32/neon", CPUID{Implementer: 0x61, Part: 0x23}, "linux", 32},
		{"an unknown arm core has no peak", "fma_fp32/neon", CPUID{Implementer: 0x41, Part: 0xd03}, "linux", 0},
		{"the Go fallback has no peak", "fma_fp32/go", CPUID{Vendor: "GenuineIntel"}, "linux", 0},
		{"an unknown x86 vendor has no peak", "fma_fp32/fma3-avx2", CPUID{Vendor: "CentaurHauls"}, "linux", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pk, ok := PeakFor(spec(tt.id), tt.cpu, tt.goos)
			if ok != (tt.want > 0) || pk.OpsPerCycle != tt.want {
				t.Errorf("PeakFor = %v, %v; want %v", pk.OpsPerCycle, ok, tt.want)
			}
		})
	}
	// 16 cores at 3 GHz at 32 FLOPs/cycle is 1536 GFLOPS.
	if got := Theoretical(16, 3000, 32); got != 1536 {
		t.Errorf("Theoretical = %v, want 1536", got)
	}
	if e := Efficiency(768, probe.Ptr(1536.0)); e == nil || *e != 0.5 {
		t.Errorf("Efficiency = %v, want 0.5", e)
	}
	if e := Efficiency(1, nil); e != nil {
		t.Errorf("Efficiency without theoretical = %v, want nil", *e)
	}
	if e := Efficiency(1, probe.Ptr(0.0)); e != nil {
		t.Errorf("Efficiency against a zero theoretical = %v, want nil", *e)
	}
}

func TestStatistics(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name         string
		in           []time.Duration
		best, median time.Duration
	}{
		{"no trials give zero", nil, 0, 0},
		{"one trial is both best and median", ms(5), 5 * time.Millisecond, 5 * time.Millisecond},
		{"best is the shortest, median the middle of an odd count", ms(9, 3, 5), 3 * time.Millisecond, 5 * time.Millisecond},
		{"median of an even count is the mean of the middle two", ms(8, 2, 4, 6), 2 * time.Millisecond, 5 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Best(tt.in); got != tt.best {
				t.Errorf("Best = %v, want %v", got, tt.best)
			}
			if got := Median(tt.in); got != tt.median {
				t.Errorf("Median = %v, want %v", got, tt.median)
			}
		})
	}
	if got := Rate(2e9, time.Second, 1e9); got != 2 {
		t.Errorf("Rate = %v, want 2", got)
	}
	if got := Rate(1, 0, 1e9); got != 0 {
		t.Errorf("Rate over zero time = %v, want 0", got)
	}
}

func TestPCIeBandwidth(t *testing.T) {
	tests := []struct {
		name       string
		gen, width int
		want       float64
	}{
		{"gen1 x16 loses a fifth to 8b/10b", 1, 16, 4},
		{"gen2 x8", 2, 8, 4},
		{"gen3 x16 is 15.75 GB/s", 3, 16, 8 * 128.0 / 130 * 16 / 8},
		{"gen4 x16 is about 31.5 GB/s", 4, 16, 16 * 128.0 / 130 * 16 / 8},
		{"gen5 x16 is about 63 GB/s", 5, 16, 32 * 128.0 / 130 * 16 / 8},
		{"gen6 x16 uses flit efficiency", 6, 16, 64 * 242.0 / 256 * 16 / 8},
		{"an unknown generation gives zero", 9, 16, 0},
		{"zero width gives zero", 4, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PCIeBandwidthGBs(tt.gen, tt.width); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("PCIeBandwidthGBs(%d, %d) = %v, want %v", tt.gen, tt.width, got, tt.want)
			}
		})
	}
}

func TestLinkResultFlagsALinkBelowItsMaximum(t *testing.T) {
	res, ok := LinkResult(DeviceLink{Device: "cuda:0", Link: probe.PCIeLink{
		GenCurrent: probe.Ptr(3), GenMax: probe.Ptr(4), WidthCurrent: probe.Ptr(8), WidthMax: probe.Ptr(16)}})
	if !ok {
		t.Fatal("no result")
	}
	if res.Flag != "below maximum: gen3 x8 of gen4 x16" {
		t.Errorf("flag = %q", res.Flag)
	}
	if res.Efficiency == nil || math.Abs(*res.Efficiency-0.25) > 1e-9 {
		t.Errorf("efficiency = %v, want 0.25", res.Efficiency)
	}
	full, _ := LinkResult(DeviceLink{Device: "cuda:1", Link: probe.PCIeLink{
		GenCurrent: probe.Ptr(4), GenMax: probe.Ptr(4), WidthCurrent: probe.Ptr(16), WidthMax: probe.Ptr(16)}})
	if full.Flag != "" {
		t.Errorf("a full-speed link is flagged %q", full.Flag)
	}
	if _, ok := LinkResult(DeviceLink{Device: "x"}); ok {
		t.Error("a link without generation or width gave a result")
	}
}

func TestLinkSuiteOnACPUOnlyMachineIsSkippedNotAnError(t *testing.T) {
	r, err := Measure(context.Background(), Options{Suites: []string{SuiteLink}, Duration: time.Second, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 0 || len(r.Skipped) != 1 || r.Skipped[0].Suite != SuiteLink {
		t.Errorf("results %v, skipped %v", r.Results, r.Skipped)
	}
}

func TestMeasureReportsEveryFigureItPlanned(t *testing.T) {
	id := CPUID{Vendor: "GenuineIntel"}
	if runtime.GOARCH == "arm64" {
		id = CPUID{Implementer: 0x41, Part: 0xd0c}
	}
	m := Machine{OS: "linux", Arch: runtime.GOARCH, CPU: id, MaxFreqMHz: probe.Ptr(3000.0), FreqSource: "test", Cores: 1}
	ks := Kernels(HostPlan())[:1]
	r, err := Measure(context.Background(), Options{
		Suites: []string{SuiteCPU, SuiteMemory}, Duration: 500 * time.Millisecond, Threads: 2,
		Machine: m, Kernels: ks, ArrayBytes: 1 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, res := range r.Results {
		got = append(got, res.Suite+"/"+res.Name+"/"+string(rune('0'+res.Threads)))
		if res.Value <= 0 || !res.Method.Verified {
			t.Errorf("%s/%s: value %v verified %v", res.Suite, res.Name, res.Value, res.Method.Verified)
		}
	}
	name := ks[0].Spec.Name
	want := []string{"cpu/" + name + "/1", "cpu/" + name + "/2",
		"memory/copy/1", "memory/scale/1", "memory/add/1", "memory/triad/1",
		"memory/copy/2", "memory/scale/2", "memory/add/2", "memory/triad/2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s\nskipped %+v", diff, r.Skipped)
	}
	// With one physical core, the all-thread peak counts one core.
	if res := r.Results[1]; ks[0].Spec.ISA != ISAGo && (res.Method.Cores != 1 || res.Theoretical == nil) {
		t.Errorf("all-thread peak: cores %d theoretical %v", res.Method.Cores, res.Theoretical)
	}
}

func TestMemoryKernelsMatchTheGoLoops(t *testing.T) {
	// Both store kinds, on whole blocks, ragged tails and targets that
	// start off a 32-byte boundary (streaming stores need an aligned head).
	for _, streaming := range []bool{false, true} {
		impl := hostMem(streaming)
		for _, n := range []int{0, 5, 16, 33, 1000} {
			for _, off := range []int{0, 1, 3} {
				alloc := func() []float64 { return make([]float64, n+off)[off:] }
				a, b, c := alloc(), alloc(), alloc()
				for i := range a {
					a[i], b[i], c[i] = float64(i)+0.5, float64(2*i)-3, 0
				}
				want := func(f func(x, y, z []float64)) []float64 {
					x, y, z := append([]float64(nil), a...), append([]float64(nil), b...), append([]float64(nil), c...)
					f(x, y, z)
					return append(append(x, y...), z...)
				}
				// The implementation runs on the offset slices themselves.
				got := func(f func(x, y, z []float64)) []float64 {
					x, y, z := alloc(), alloc(), alloc()
					copy(x, a)
					copy(y, b)
					copy(z, c)
					f(x, y, z)
					return append(append(append([]float64(nil), x...), y...), z...)
				}
				cases := []struct {
					name      string
					ref, impl func(x, y, z []float64)
				}{
					{"copy", func(x, y, z []float64) { goMem.copy(z, x) }, func(x, y, z []float64) { impl.copy(z, x) }},
					{"scale", func(x, y, z []float64) { goMem.scale(y, x, 3) }, func(x, y, z []float64) { impl.scale(y, x, 3) }},
					{"add", func(x, y, z []float64) { goMem.add(z, x, y) }, func(x, y, z []float64) { impl.add(z, x, y) }},
					{"triad", func(x, y, z []float64) { goMem.triad(z, x, y, 3) }, func(x, y, z []float64) { impl.triad(z, x, y, 3) }},
				}
				for _, tc := range cases {
					if diff := cmp.Diff(want(tc.ref), got(tc.impl)); diff != "" {
						t.Errorf("%s over %d elements at offset %d (%s): (-want +got)\n%s", tc.name, n, off, impl.isa, diff)
					}
				}
			}
		}
	}
}

func TestStreamingStoresOnlyForArraysBeyondTheCache(t *testing.T) {
	for _, tc := range []struct {
		array, llc int64
		want       bool
	}{
		{array: 128 << 20, llc: 32 << 20, want: true},
		{array: 8 << 20, llc: 32 << 20, want: false},
		{array: 11 << 20, llc: 32 << 20, want: true},
		{array: 64 << 20, llc: 0, want: true},
	} {
		if got := Streaming(tc.array, tc.llc); got != tc.want {
			t.Errorf("Streaming(%d MiB, %d MiB) = %v, want %v", tc.array>>20, tc.llc>>20, got, tc.want)
		}
	}
}

func TestChunksCoverTheArrayOnAlignedBoundaries(t *testing.T) {
	for _, n := range []int{0, 15, 16, 100, 1 << 20} {
		for parts := 1; parts <= 5; parts++ {
			next := 0
			for w := 0; w < parts; w++ {
				lo, hi := chunk(n, parts, w)
				if lo != next || hi < lo || (w < parts-1 && lo%16 != 0) {
					t.Fatalf("n=%d parts=%d w=%d: [%d,%d) after %d", n, parts, w, lo, hi, next)
				}
				next = hi
			}
			if next != n {
				t.Fatalf("n=%d parts=%d: covered %d", n, parts, next)
			}
		}
	}
}

func TestArrayBytes(t *testing.T) {
	tests := []struct {
		name       string
		llc, avail int64
		want       int64
	}{
		{"four times a 32 MiB cache", 32 << 20, 0, 128 << 20},
		{"64 MiB when the cache is unknown", 0, 0, 64 << 20},
		{"at least 16 MiB for a small cache", 1 << 20, 0, 16 << 20},
		{"three arrays within half the available memory", 256 << 20, 600 << 20, 100 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ArrayBytes(tt.llc, tt.avail); got != tt.want {
				t.Errorf("ArrayBytes = %d MiB, want %d MiB", got>>20, tt.want>>20)
			}
		})
	}
}

func TestDefaultThreads(t *testing.T) {
	if got := DefaultThreads(8, nil); got != 8 {
		t.Errorf("no quota: %d", got)
	}
	if got := DefaultThreads(8, probe.Ptr(1.5)); got != 2 {
		t.Errorf("quota 1.5: %d, want 2", got)
	}
	if got := DefaultThreads(2, probe.Ptr(16.0)); got != 2 {
		t.Errorf("quota above CPUs: %d, want 2", got)
	}
	if got := DefaultThreads(5000, nil); got != MaxThreads {
		t.Errorf("more CPUs than MaxThreads: %d, want %d", got, MaxThreads)
	}
}

func TestFactsFromAFixtureTree(t *testing.T) {
	root := t.TempDir()
	write(t, root, "proc/cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n")
	write(t, root, "proc/meminfo", "MemTotal:       24576000 kB\nMemAvailable:   20000000 kB\n")
	write(t, root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n") // marks a cgroup v2 root
	write(t, root, "sys/fs/cgroup/cpu.max", "150000 100000\n")
	write(t, root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3700000\n")
	for _, c := range []struct{ idx, level, typ, size, shared string }{
		{"index0", "1", "Data", "48K", "0"}, {"index1", "1", "Instruction", "32K", "0"},
		{"index2", "2", "Unified", "1024K", "0"}, {"index3", "3", "Unified", "32768K", "0"},
	} {
		d := "sys/devices/system/cpu/cpu0/cache/" + c.idx + "/"
		write(t, root, d+"level", c.level)
		write(t, root, d+"type", c.typ)
		write(t, root, d+"size", c.size)
		write(t, root, d+"shared_cpu_list", c.shared)
	}
	h, err := host.Local(host.LocalOptions{Sysroot: root})
	if err != nil {
		t.Fatal(err)
	}
	m := Facts(h, nil)
	want := Machine{OS: "linux", Arch: runtime.GOARCH, CPU: CPUID{Vendor: "AuthenticAMD", Family: 26, Model: 2},
		ModelName: "AMD EPYC", LogicalCPUs: 2, MaxFreqMHz: probe.Ptr(3700.0), FreqSource: "cpufreq cpuinfo_max_freq",
		LLCBytes: 64 << 20, MemTotalBytes: 24576000 << 10, MemAvailBytes: 20000000 << 10, CPUQuota: probe.Ptr(1.5)}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func write(t *testing.T, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := mkdirWrite(p, content); err != nil {
		t.Fatal(err)
	}
}

func TestTrialsStopWhenSettledOrOutOfTime(t *testing.T) {
	ms := time.Millisecond
	future := time.Now().Add(time.Hour)
	tests := []struct {
		name  string
		until time.Time
		seq   []time.Duration
		want  int
	}{
		{"three equal trials settle at once", future, []time.Duration{10 * ms}, minTrials},
		{"an ended slice stops after the first trial: the budget wins", time.Now().Add(-time.Second), []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms}, 1},
		{"noisy trials run until the best three agree", future, []time.Duration{10 * ms, 13 * ms, 16 * ms, 10 * ms, 19 * ms, 10 * ms}, 6},
		{"never settling stops at the cap", future, []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms, 50 * ms}, maxTrials},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			i := 0
			times, err := runTrials(context.Background(), tc.until, 1, func() []time.Duration {
				d := tc.seq[i%len(tc.seq)]
				if tc.want == maxTrials { // strictly growing: never three alike
					d += time.Duration(i) * ms
				}
				i++
				return []time.Duration{d}
			})
			if err != nil || len(times[0]) != tc.want {
				t.Fatalf("%d trials, %v; want %d", len(times[0]), err, tc.want)
			}
		})
	}
}

func TestTheScheduleSharesWhatIsLeftByWeight(t *testing.T) {
	s := &schedule{deadline: time.Now().Add(10 * time.Second), tests: []test{{weight: 1}, {weight: 1}, {weight: 4}, {weight: 4}}}
	got := time.Until(s.slice(0))
	if got < 900*time.Millisecond || got > 1000*time.Millisecond {
		t.Errorf("first of weights 1,1,4,4 in 10 s gets %s, want about 1 s", got)
	}
	s.deadline = time.Now().Add(-time.Second)
	if got := time.Until(s.slice(2)); got > 0 {
		t.Errorf("past the deadline a test gets %s, want nothing", got)
	}
}

func TestMeasureJudgesTheMachineWhenItCanSampleTheLoad(t *testing.T) {
	ks := Kernels(HostPlan())
	if len(ks) == 0 {
		t.Skip("no kernel")
	}
	calls := 0
	load := func() LoadSample {
		calls++
		// Other processes took a whole CPU of two while the suite ran.
		busy := uint64(calls-1) * 200
		return LoadSample{Time: time.Unix(int64(calls-1), 0), Load1: 1, OK: true, CPU: CPUTimes{User: busy, Idle: 1000 + busy}}
	}
	r, err := Measure(context.Background(), Options{Suites: []string{SuiteCPU}, Duration: 20 * time.Millisecond, Threads: 1,
		Kernels: ks[:1], Machine: Machine{LogicalCPUs: 2}, Load: load})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || r.Conditions == nil || !r.Conditions.Busy {
		t.Fatalf("load sampled %d times, conditions %+v", calls, r.Conditions)
	}
	res := r.Results[0]
	if res.Source != SourceMeasured || res.Method.Settled == nil || res.Method.Trials < 1 {
		t.Errorf("result %+v", res)
	}
}

func TestMemorySizeFitsTheSlice(t *testing.T) {
	const gib = 1 << 30
	rate := 2e9 // bytes/s of first touch
	perByte := memoryCost(rate)
	tests := []struct {
		name    string
		planned int64
		left    time.Duration
		want    func(int64) bool
	}{
		{"a slice that holds the whole test keeps the planned size", gib, time.Hour, func(s int64) bool { return s == gib }},
		{"a short slice cuts the arrays to what it holds", 2 * gib, 2 * time.Second,
			func(s int64) bool {
				return s < 2*gib && float64(s)*perByte <= budgetShare*2+touchPasses*float64(pilotBytes)/rate+1e-9
			}},
		{"never below the pilot already touched", 2 * gib, time.Millisecond, func(s int64) bool { return s == pilotBytes }},
		{"a planned size below the pilot is the planned size", 1 << 20, 0, func(s int64) bool { return s == 1<<20 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := memorySize(tc.planned, min(tc.planned, pilotBytes), rate, tc.left)
			if !tc.want(got) || got%(1<<12) != 0 {
				t.Errorf("memorySize = %d MiB", got>>20)
			}
		})
	}
}

// A memory test whose slice cannot hold arrays larger than the last-level
// cache is skipped, naming the --duration that would: figures from arrays
// inside the cache would measure the cache, not memory.
func TestMemoryTooShortForTheCacheIsSkipped(t *testing.T) {
	m := Machine{LLCBytes: 1 << 30, MemAvailBytes: 64 << 30}
	r, err := Measure(context.Background(), Options{Suites: []string{SuiteMemory}, Duration: 20 * time.Millisecond, Threads: 1, Machine: m})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 0 || len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0].Reason, "run with --duration") ||
		!strings.Contains(r.Skipped[0].Reason, "not more than the last-level cache (1.0 GiB)") {
		t.Errorf("results %v, skipped %+v", r.Results, r.Skipped)
	}
	if r.ElapsedMS > 1000 {
		t.Errorf("a 20 ms budget took %d ms", r.ElapsedMS)
	}
}
