package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/devctl/devctl/internal/probe"
)

// Suite names.
const (
	SuiteCPU    = "cpu"
	SuiteMemory = "memory"
	SuiteLink   = "link"
)

// AllSuites is every suite, in the order they run.
var AllSuites = []string{SuiteCPU, SuiteMemory, SuiteLink}

// SchemaVersion is the version of the bench JSON (output and history).
const SchemaVersion = 1

// Run is one bench run: what `devctl bench -o json` prints and what the
// history file stores (without Compare).
type Run struct {
	SchemaVersion int          `json:"schema_version"`
	DevctlVersion string       `json:"devctl_version"`
	Time          time.Time    `json:"time"`
	Host          HostIdentity `json:"host"`
	Suites        []string     `json:"suites"`
	Threads       int          `json:"threads"`
	DurationMS    int64        `json:"duration_ms"`
	ElapsedMS     int64        `json:"elapsed_ms"`
	Results       []Result     `json:"results"`
	Skipped       []Skip       `json:"skipped,omitempty"`
	Compare       *Comparison  `json:"compare,omitempty"`
}

// HostIdentity says which machine a run measured, without secrets: no
// hostname, no machine-id, no serial numbers. The fingerprint hashes the
// CPU model, logical CPU count, memory size (GiB) and OS/arch, so that
// --compare finds runs of the same hardware.
type HostIdentity struct {
	Fingerprint   string `json:"fingerprint"`
	CPUModel      string `json:"cpu_model"`
	LogicalCPUs   int    `json:"logical_cpus"`
	MemoryTotalMB int64  `json:"memory_total_mb"`
	OS            string `json:"os"`
	Arch          string `json:"arch"`
}

// Identity computes the host identity of a machine.
func Identity(m Machine) HostIdentity {
	id := HostIdentity{CPUModel: m.ModelName, LogicalCPUs: m.LogicalCPUs, MemoryTotalMB: m.MemTotalBytes >> 20, OS: m.OS, Arch: m.Arch}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%s|%d|%d", id.OS, id.Arch, id.CPUModel, id.LogicalCPUs, (m.MemTotalBytes+1<<29)>>30)))
	id.Fingerprint = hex.EncodeToString(sum[:8])
	return id
}

// Result is one measured (or, for links, derived) figure.
type Result struct {
	Suite   string  `json:"suite"`
	Name    string  `json:"name"`
	Threads int     `json:"threads"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	// Theoretical is what the hardware should reach, null when unknown.
	Theoretical *float64 `json:"theoretical"`
	// Efficiency is Value/Theoretical, null when Theoretical is.
	Efficiency *float64 `json:"efficiency"`
	Method     Method   `json:"method"`
	// Flag marks a figure that needs attention (a link below its maximum).
	Flag string `json:"flag,omitempty"`
	// Change is filled by --compare.
	Change *Change `json:"change,omitempty"`
}

// Method records how a figure was obtained, so that runs on two machines
// compare like with like.
type Method struct {
	Kernel          string   `json:"kernel"`
	ISA             string   `json:"isa,omitempty"`
	Trials          int      `json:"trials,omitempty"`
	Statistic       string   `json:"statistic,omitempty"`
	MedianValue     *float64 `json:"median_value,omitempty"`
	ItersPerTrial   int64    `json:"iterations_per_trial,omitempty"`
	ArrayBytes      int64    `json:"array_bytes,omitempty"`
	BytesPerElement int      `json:"bytes_per_element,omitempty"`
	FrequencyMHz    *float64 `json:"frequency_mhz,omitempty"`
	FrequencySource string   `json:"frequency_source,omitempty"`
	OpsPerCycle     float64  `json:"ops_per_cycle_per_core,omitempty"`
	// ImpliedMHz is measured / (cores × ops per cycle): the clock the
	// figure implies if the peak table is right.
	ImpliedMHz   *float64 `json:"implied_mhz,omitempty"`
	Cores        int      `json:"cores,omitempty"`
	PeakNote     string   `json:"peak_note,omitempty"`
	Verified     bool     `json:"verified,omitempty"`
	Pinned       bool     `json:"pinned,omitempty"`
	Note         string   `json:"note,omitempty"`
	Device       string   `json:"device,omitempty"`
	GenCurrent   *int     `json:"gen_current,omitempty"`
	WidthCurrent *int     `json:"width_current,omitempty"`
	GenMax       *int     `json:"gen_max,omitempty"`
	WidthMax     *int     `json:"width_max,omitempty"`
}

// Skip records a suite or test that did not run, and why.
type Skip struct {
	Suite  string `json:"suite"`
	Name   string `json:"name,omitempty"`
	Reason string `json:"reason"`
}

// Progress is reported before each test starts.
type Progress struct {
	Suite string
	Test  string
	Step  int
	Total int
}

// Options configure Run.
type Options struct {
	Suites   []string
	Duration time.Duration
	Threads  int
	Machine  Machine
	// Progress, when set, is called before each test (from Run's goroutine).
	Progress func(Progress)
	Now      func() time.Time
	// Kernels overrides the planned compute kernels (tests).
	Kernels []Kernel
	// ArrayBytes overrides the STREAM array size (tests).
	ArrayBytes int64
	Version    string
}

// DefaultThreads is one thread per logical CPU this process may use,
// lowered to a cgroup CPU quota (rounded up).
func DefaultThreads(logical int, quota *float64) int {
	n := logical
	if n <= 0 {
		n = runtime.NumCPU()
	}
	if quota != nil && *quota > 0 {
		q := int(*quota)
		if float64(q) < *quota {
			q++
		}
		if q < n {
			n = q
		}
	}
	return min(max(n, 1), MaxThreads)
}

// MaxThreads bounds the thread count: every worker holds an OS thread (the
// Go runtime aborts the whole process past 10,000), and far more threads
// than CPUs only add switching that overruns the duration.
const MaxThreads = 1024

// threadModes is 1 and n, or just 1.
func threadModes(n int) []int {
	if n <= 1 {
		return []int{1}
	}
	return []int{1, n}
}

// Measure runs the selected suites within about opts.Duration.
func Measure(ctx context.Context, opts Options) (*Run, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if opts.Threads < 1 || opts.Threads > MaxThreads {
		return nil, fmt.Errorf("threads %d: want 1 to %d", opts.Threads, MaxThreads)
	}
	if opts.Duration <= 0 {
		return nil, fmt.Errorf("duration %s: want a positive duration", opts.Duration)
	}
	r := &Run{
		SchemaVersion: SchemaVersion,
		DevctlVersion: opts.Version,
		Time:          now().UTC(),
		Host:          Identity(opts.Machine),
		Suites:        opts.Suites,
		Threads:       opts.Threads,
		DurationMS:    opts.Duration.Milliseconds(),
		Results:       []Result{},
	}
	started := time.Now()
	has := map[string]bool{}
	for _, s := range opts.Suites {
		has[s] = true
	}
	kernels := opts.Kernels
	if has[SuiteCPU] && kernels == nil {
		kernels = Kernels(HostPlan())
	}
	modes := threadModes(opts.Threads)
	total := 0
	if has[SuiteCPU] {
		total += len(kernels) * len(modes)
	}
	if has[SuiteMemory] {
		total += len(modes)
	}
	cpuBudget, memBudget := opts.Duration, opts.Duration
	if has[SuiteCPU] && has[SuiteMemory] {
		cpuBudget = opts.Duration * 45 / 100
		memBudget = opts.Duration - cpuBudget
	}
	step := 0
	progress := func(suite, test string) {
		step++
		if opts.Progress != nil {
			opts.Progress(Progress{Suite: suite, Test: test, Step: step, Total: total})
		}
	}
	if has[SuiteCPU] {
		if err := runCPU(ctx, r, opts, kernels, modes, cpuBudget, progress); err != nil {
			return r, err
		}
	}
	if has[SuiteMemory] {
		if err := runMemory(ctx, r, opts, modes, memBudget, progress); err != nil {
			return r, err
		}
	}
	if has[SuiteLink] {
		runLink(r, opts.Machine)
	}
	r.ElapsedMS = time.Since(started).Milliseconds()
	return r, nil
}

// computeTrials is high and each trial short: on a shared machine the best
// of many short trials finds the quiet moments.
const computeTrials = 10

func runCPU(ctx context.Context, r *Run, opts Options, kernels []Kernel, modes []int, budget time.Duration, progress func(string, string)) error {
	m := opts.Machine
	if len(kernels) == 0 {
		r.Skipped = append(r.Skipped, Skip{Suite: SuiteCPU, Reason: "no compute kernel for this CPU"})
		return nil
	}
	perTest := budget / time.Duration(len(kernels)*len(modes))
	trial := perTest / (computeTrials + 1)
	if trial < time.Millisecond {
		trial = time.Millisecond
	}
	pools := map[int]*pool{}
	defer func() {
		for _, p := range pools {
			p.close()
		}
	}()
	for _, n := range modes {
		pools[n] = newPool(n)
	}
	for _, k := range kernels {
		if err := k.Check(); err != nil {
			r.Skipped = append(r.Skipped, Skip{Suite: SuiteCPU, Name: k.Spec.Name, Reason: err.Error()})
			for range modes {
				progress(SuiteCPU, k.Spec.Name)
			}
			continue
		}
		// Calibrate on one thread: grow the loop until it runs 2 ms.
		one := pools[1]
		iters := int64(1024)
		var d time.Duration
		for {
			d = one.run(func(int) { k.Run(iters) })
			if d >= 2*time.Millisecond || iters > 1<<40 {
				break
			}
			iters *= 4
		}
		perTrial := int64(float64(iters) * trial.Seconds() / d.Seconds())
		if perTrial < 1 {
			perTrial = 1
		}
		for _, n := range modes {
			if err := ctx.Err(); err != nil {
				return err
			}
			progress(SuiteCPU, fmt.Sprintf("%s (%s, %d thread%s)", k.Spec.Name, k.Spec.ISA, n, plural(n)))
			p := pools[n]
			// More threads than CPUs share them: shrink each thread's share
			// so that a trial still takes about its budget.
			iters := perTrial
			if cpus := runtime.NumCPU(); n > cpus {
				iters = max(1, perTrial*int64(cpus)/int64(n))
			}
			times := make([]time.Duration, 0, computeTrials)
			for t := 0; t < computeTrials; t++ {
				times = append(times, p.run(func(int) { k.Run(iters) }))
			}
			work := k.Spec.OpsPerIter * float64(iters) * float64(n)
			res := Result{
				Suite: SuiteCPU, Name: k.Spec.Name, Threads: n, Unit: k.Spec.Unit,
				Value: Rate(work, Best(times), 1e9),
				Method: Method{
					Kernel:        fmt.Sprintf("%d independent %s chains, %d lanes", k.Spec.Accumulators, k.Spec.Instruction, k.Spec.Lanes),
					ISA:           k.Spec.ISA,
					Trials:        computeTrials,
					Statistic:     "best",
					MedianValue:   probe.Ptr(Rate(work, Median(times), 1e9)),
					ItersPerTrial: iters,
					Verified:      true,
					Pinned:        p.pinned,
				},
			}
			cores := n
			if m.Cores > 0 && m.Cores < cores {
				cores = m.Cores
			}
			if pk, ok := PeakFor(k.Spec, m.CPU, m.OS); ok {
				res.Method.OpsPerCycle, res.Method.PeakNote, res.Method.Cores = pk.OpsPerCycle, pk.Note, cores
				if m.MaxFreqMHz != nil {
					res.Method.FrequencyMHz, res.Method.FrequencySource = m.MaxFreqMHz, m.FreqSource
					res.Theoretical = probe.Ptr(Theoretical(cores, *m.MaxFreqMHz, pk.OpsPerCycle))
				} else if m.CurrentMHz != nil {
					res.Method.Note = fmt.Sprintf("maximum CPU frequency unknown (no cpufreq; /proc/cpuinfo gives only the current clock, %.0f MHz): no theoretical figure", *m.CurrentMHz)
				} else {
					res.Method.Note = "maximum CPU frequency unknown (no cpufreq): no theoretical figure"
				}
				// The clock the measurement implies if the table is right: a
				// CPU held in a power-saving governor shows here.
				res.Method.ImpliedMHz = probe.Ptr(math.Round(res.Value / (float64(cores) * pk.OpsPerCycle) * 1000))
			} else {
				res.Method.Note = "microarchitecture not in devctl's peak table: no theoretical figure"
			}
			res.Efficiency = Efficiency(res.Value, res.Theoretical)
			r.Results = append(r.Results, res)
		}
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ArrayBytes chooses STREAM's array size: at least four times the
// machine's last-level cache (64 MiB when unknown, 16 MiB at least), and
// the three arrays within half the available memory.
func ArrayBytes(llc, avail int64) int64 {
	size := int64(64 << 20)
	if llc > 0 {
		size = 4 * llc
	}
	if size < 16<<20 {
		size = 16 << 20
	}
	if avail > 0 && 3*size > avail/2 {
		size = avail / 6
	}
	if size < 1<<20 {
		size = 1 << 20
	}
	return size &^ (1<<12 - 1)
}

const (
	minMemTrials = 2
	maxMemTrials = 10
)

func runMemory(ctx context.Context, r *Run, opts Options, modes []int, budget time.Duration, progress func(string, string)) error {
	size := opts.ArrayBytes
	if size <= 0 {
		size = ArrayBytes(opts.Machine.LLCBytes, opts.Machine.MemAvailBytes)
	}
	n := int(size / 8)
	impl := hostMem(Streaming(size, opts.Machine.LLCBytes))
	a, b, c := make([]float64, n), make([]float64, n), make([]float64, n)
	defer debug.FreeOSMemory()
	perMode := budget / time.Duration(len(modes))
	for _, threads := range modes {
		if err := ctx.Err(); err != nil {
			return err
		}
		progress(SuiteMemory, fmt.Sprintf("stream copy/scale/add/triad (%d thread%s, 3 × %d MiB)", threads, plural(threads), size>>20))
		p := newPool(threads)
		// First touch by the threads that will use each part (NUMA).
		p.run(func(w int) {
			lo, hi := chunk(n, threads, w)
			for i := lo; i < hi; i++ {
				a[i], b[i], c[i] = 1, 2, 0
			}
			for i := lo; i < hi; i++ {
				a[i] = 2 * a[i]
			}
		})
		times := make([][]time.Duration, len(streamKernels))
		runTrial := func() time.Duration {
			ds := [4]time.Duration{
				p.run(func(w int) { lo, hi := chunk(n, threads, w); impl.copy(c[lo:hi], a[lo:hi]) }),
				p.run(func(w int) { lo, hi := chunk(n, threads, w); impl.scale(b[lo:hi], c[lo:hi], streamScalar) }),
				p.run(func(w int) { lo, hi := chunk(n, threads, w); impl.add(c[lo:hi], a[lo:hi], b[lo:hi]) }),
				p.run(func(w int) { lo, hi := chunk(n, threads, w); impl.triad(a[lo:hi], b[lo:hi], c[lo:hi], streamScalar) }),
			}
			var sum time.Duration
			for i, d := range ds {
				times[i] = append(times[i], d)
				sum += d
			}
			return sum
		}
		t0 := time.Now()
		warm := runTrial() // STREAM discards the first trial
		for i := range times {
			times[i] = times[i][:0]
		}
		trials := int((perMode - time.Since(t0)) / (warm + 1))
		trials = min(max(trials, minMemTrials), maxMemTrials)
		for t := 0; t < trials; t++ {
			if err := ctx.Err(); err != nil {
				p.close()
				return err
			}
			runTrial()
		}
		p.close()
		if err := checkStream(a, b, c, trials+1); err != nil {
			r.Skipped = append(r.Skipped, Skip{Suite: SuiteMemory, Reason: err.Error()})
			continue
		}
		for i, sk := range streamKernels {
			bytes := float64(sk.words*8) * float64(n)
			r.Results = append(r.Results, Result{
				Suite: SuiteMemory, Name: sk.name, Threads: threads, Unit: UnitGBs,
				Value: Rate(bytes, Best(times[i]), 1e9),
				Method: Method{
					Kernel:          streamFormula(sk.name),
					ISA:             impl.isa,
					Trials:          trials,
					Statistic:       "best",
					MedianValue:     probe.Ptr(Rate(bytes, Median(times[i]), 1e9)),
					ArrayBytes:      size,
					BytesPerElement: sk.words * 8,
					Verified:        true,
					Pinned:          p.pinned,
					Note:            "theoretical bandwidth needs the memory configuration (DIMM speed and channels), which devctl does not read",
				},
			})
		}
	}
	return nil
}

func streamFormula(name string) string {
	switch name {
	case "copy":
		return "STREAM copy c[i] = a[i]"
	case "scale":
		return "STREAM scale b[i] = q*c[i]"
	case "add":
		return "STREAM add c[i] = a[i] + b[i]"
	default:
		return "STREAM triad a[i] = b[i] + q*c[i]"
	}
}

func runLink(r *Run, m Machine) {
	if len(m.Links) == 0 {
		r.Skipped = append(r.Skipped, Skip{Suite: SuiteLink, Reason: "no accelerator with PCIe link information"})
		return
	}
	for _, dl := range m.Links {
		res, ok := LinkResult(dl)
		if !ok {
			r.Skipped = append(r.Skipped, Skip{Suite: SuiteLink, Name: dl.Device, Reason: "PCIe generation or width unknown"})
			continue
		}
		r.Results = append(r.Results, res)
	}
}

// LinkResult turns a device's PCIe link into a result: the bandwidth its
// current generation and width allow, against what its maximum allows.
func LinkResult(dl DeviceLink) (Result, bool) {
	l := dl.Link
	if l.GenCurrent == nil || l.WidthCurrent == nil {
		return Result{}, false
	}
	cur := PCIeBandwidthGBs(*l.GenCurrent, *l.WidthCurrent)
	if cur <= 0 {
		return Result{}, false
	}
	res := Result{
		Suite: SuiteLink, Name: "pcie", Unit: UnitGBs, Value: cur,
		Method: Method{
			Kernel:       "theoretical host↔device bandwidth per direction: GT/s × encoding × width / 8 (from the reported link, not a transfer)",
			Device:       dl.Device,
			GenCurrent:   l.GenCurrent,
			WidthCurrent: l.WidthCurrent,
			GenMax:       l.GenMax,
			WidthMax:     l.WidthMax,
			Note:         "an idle GPU may lower its link generation to save power: check again under load",
		},
	}
	gm, wm := *l.GenCurrent, *l.WidthCurrent
	if l.GenMax != nil {
		gm = *l.GenMax
	}
	if l.WidthMax != nil {
		wm = *l.WidthMax
	}
	if l.GenMax != nil || l.WidthMax != nil {
		if max := PCIeBandwidthGBs(gm, wm); max > 0 {
			res.Theoretical = probe.Ptr(max)
			res.Efficiency = Efficiency(cur, res.Theoretical)
		}
	}
	if gm > *l.GenCurrent || wm > *l.WidthCurrent {
		res.Flag = fmt.Sprintf("below maximum: gen%d x%d of gen%d x%d", *l.GenCurrent, *l.WidthCurrent, gm, wm)
	}
	return res, true
}
