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
	"github.com/devctl/devctl/internal/units"
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
	// Conditions says how quiet the machine was (nil when not sampled).
	Conditions *Conditions `json:"conditions,omitempty"`
	Skipped    []Skip      `json:"skipped,omitempty"`
	Compare    *Comparison `json:"compare,omitempty"`
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

// Sources of a figure: measured on this machine, or computed from what the
// hardware reports (a PCIe link's generation and width).
const (
	SourceMeasured = "measured"
	SourceComputed = "computed"
)

// Result is one measured (or, for links, computed) figure.
type Result struct {
	Suite   string  `json:"suite"`
	Name    string  `json:"name"`
	Threads int     `json:"threads"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	// Source is SourceMeasured or SourceComputed.
	Source string `json:"source"`
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
	Kernel      string   `json:"kernel"`
	ISA         string   `json:"isa,omitempty"`
	Trials      int      `json:"trials,omitempty"`
	Statistic   string   `json:"statistic,omitempty"`
	MedianValue *float64 `json:"median_value,omitempty"`
	// SpreadPercent is how far the median trial fell below the best one:
	// the noise of this figure, used to judge a regression.
	SpreadPercent *float64 `json:"spread_percent,omitempty"`
	// Settled is true when the best three trials agreed within 1%;
	// false when the time slice ended first.
	Settled *bool `json:"settled,omitempty"`
	// Stores is the STREAM kernels' store kind: "non-temporal" when the
	// arrays exceed the last-level cache, else "write-allocate".
	Stores          string   `json:"stores,omitempty"`
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
	// Load, when set, samples how busy the machine is; Measure calls it
	// before and after the suites and judges the Conditions.
	Load func() LoadSample
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
	// The budget is a deadline shared by every test: each gets an equal
	// share of what is left, so a slow test (a busy machine, a long
	// calibration) shortens the next ones instead of overrunning. A memory
	// test (four kernels over freshly touched arrays) weighs four compute
	// tests.
	var tests []test
	if has[SuiteCPU] {
		for _, k := range kernels {
			for _, n := range modes {
				tests = append(tests, test{suite: SuiteCPU, kernel: k, threads: n, weight: 1})
			}
		}
	}
	if has[SuiteMemory] {
		for _, n := range modes {
			tests = append(tests, test{suite: SuiteMemory, threads: n, weight: 4})
		}
	}
	var before LoadSample
	if opts.Load != nil {
		before = opts.Load()
	}
	s := &schedule{deadline: started.Add(opts.Duration), tests: tests}
	for i, t := range tests {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		if opts.Progress != nil {
			opts.Progress(Progress{Suite: t.suite, Test: t.describe(opts), Step: i + 1, Total: len(tests)})
		}
		until := s.slice(i)
		var err error
		switch t.suite {
		case SuiteCPU:
			err = runCompute(ctx, r, opts, t, until)
		case SuiteMemory:
			err = runMemory(ctx, r, opts, t.threads, until, s.share(i))
		}
		if err != nil {
			return r, err
		}
	}
	if has[SuiteLink] {
		runLink(r, opts.Machine)
	}
	if opts.Load != nil {
		c := JudgeConditions(before, opts.Load(), max(opts.Machine.LogicalCPUs, 1))
		for _, w := range belowOneThread(r.Results) {
			c.Reasons = append(c.Reasons, w)
		}
		c.Busy = len(c.Reasons) > 0
		r.Conditions = &c
	}
	r.ElapsedMS = time.Since(started).Milliseconds()
	return r, nil
}

// test is one planned measurement: a compute kernel or the STREAM set at
// one thread count.
type test struct {
	suite   string
	kernel  Kernel
	threads int
	weight  int
}

func (t test) describe(opts Options) string {
	if t.suite == SuiteCPU {
		return fmt.Sprintf("%s (%s, %d thread%s)", t.kernel.Spec.Name, t.kernel.Spec.ISA, t.threads, plural(t.threads))
	}
	return fmt.Sprintf("stream copy/scale/add/triad (%d thread%s)", t.threads, plural(t.threads))
}

// schedule shares what is left of the budget among the tests left.
type schedule struct {
	deadline time.Time
	tests    []test
}

// share is test i's part of the whole budget, by weight.
func (s *schedule) share(i int) float64 {
	total := 0
	for _, t := range s.tests {
		total += t.weight
	}
	return float64(s.tests[i].weight) / float64(max(total, 1))
}

// slice returns when test i must stop taking new trials.
func (s *schedule) slice(i int) time.Time {
	left := time.Until(s.deadline)
	if left <= 0 {
		return time.Now()
	}
	weights := 0
	for _, t := range s.tests[i:] {
		weights += t.weight
	}
	return time.Now().Add(left * time.Duration(s.tests[i].weight) / time.Duration(weights))
}

// Trial bounds: tests are sized so that minTrials fit in their slice (a
// figure from one or two trials says little of its noise), at most
// maxTrials run. The budget wins over the minimum: on a machine slower than
// planned a test stops after fewer trials, and says so ("best of 2").
const (
	minTrials = 3
	maxTrials = 40
	// settleSpread: the best three trials within 1% of each other count as
	// a settled figure, and the test stops early.
	settleSpread = 0.01
)

// runTrials runs trial (which times one or more figures at once) until
// every figure has settled, or another trial like the last would end past
// the slice, or maxTrials. The first trial always runs. It returns each
// figure's trial times.
func runTrials(ctx context.Context, until time.Time, figures int, trial func() []time.Duration) ([][]time.Duration, error) {
	times := make([][]time.Duration, figures)
	for n := 0; n < maxTrials; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		for i, d := range trial() {
			times[i] = append(times[i], d)
		}
		settled := n+1 >= minTrials
		for _, ts := range times {
			settled = settled && Settled(ts, settleSpread)
		}
		// Stop when settled, or when one more trial like the last would
		// end past the slice.
		if now := time.Now(); settled || now.Add(now.Sub(t0)).After(until) {
			break
		}
	}
	return times, nil
}

// spread fills a figure's best, median, spread and settled fields.
func spread(m *Method, work float64, ts []time.Duration) float64 {
	best := Rate(work, Best(ts), 1e9)
	med := Rate(work, Median(ts), 1e9)
	m.Trials, m.Statistic = len(ts), "best"
	m.MedianValue = probe.Ptr(med)
	if best > 0 && len(ts) > 1 { // one trial has no spread to show
		m.SpreadPercent = probe.Ptr(round1((best - med) / best * 100))
	}
	m.Settled = probe.Ptr(Settled(ts, settleSpread))
	return best
}

// belowOneThread names the figures whose all-thread value came out below
// the one-thread value: n workers cannot do less than one unless something
// else held their CPUs.
func belowOneThread(rs []Result) []string {
	var out []string
	one := map[string]float64{}
	for _, r := range rs {
		if r.Source == SourceMeasured && r.Threads == 1 {
			one[r.Suite+"/"+r.Name] = r.Value
		}
	}
	for _, r := range rs {
		if v, ok := one[r.Suite+"/"+r.Name]; ok && r.Threads > 1 && r.Value < v {
			out = append(out, fmt.Sprintf("%s with %d threads measured less than with 1 (%.3g < %.3g %s)", r.Name, r.Threads, r.Value, v, r.Unit))
		}
	}
	return out
}

// runCompute checks a kernel, calibrates it on one thread and times it on
// t.threads threads until its figure settles or its slice ends.
func runCompute(ctx context.Context, r *Run, opts Options, t test, until time.Time) error {
	k, n, m := t.kernel, t.threads, opts.Machine
	if err := k.Check(); err != nil {
		if n == 1 || len(threadModes(opts.Threads)) == 1 {
			r.Skipped = append(r.Skipped, Skip{Suite: SuiteCPU, Name: k.Spec.Name, Reason: err.Error()})
		}
		return nil
	}
	p := newPool(n)
	defer p.close()
	// Calibrate: grow the loop until one run takes 2 ms, then size a trial
	// so that about ten fit in the slice (1 ms to 200 ms each).
	iters := int64(1024)
	var d time.Duration
	for {
		d = p.run(func(int) { k.Run(iters) })
		if d >= 2*time.Millisecond || iters > 1<<40 {
			break
		}
		iters *= 4
	}
	trial := min(max(time.Until(until)/10, time.Millisecond), 200*time.Millisecond)
	iters = max(1, int64(float64(iters)*trial.Seconds()/d.Seconds()))
	times, err := runTrials(ctx, until, 1, func() []time.Duration {
		return []time.Duration{p.run(func(int) { k.Run(iters) })}
	})
	if err != nil {
		return err
	}
	work := k.Spec.OpsPerIter * float64(iters) * float64(n)
	res := Result{
		Suite: SuiteCPU, Name: k.Spec.Name, Threads: n, Unit: k.Spec.Unit, Source: SourceMeasured,
		Method: Method{
			Kernel:        fmt.Sprintf("%d independent %s chains, %d lanes", k.Spec.Accumulators, k.Spec.Instruction, k.Spec.Lanes),
			ISA:           k.Spec.ISA,
			ItersPerTrial: iters,
			Verified:      true,
			Pinned:        p.pinned,
		},
	}
	res.Value = spread(&res.Method, work, times[0])
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

// Memory test sizing. A test first touches its arrays (touchPasses array
// passes: three writes and a read-modify-write of a), paying a page fault
// per page, then discards one trial and runs minTrials more (trialPasses
// each: copy and scale 2, add and triad 3). The first pilotBytes of each
// array (less when the slice is short) are touched first and timed; the kernels are taken to run
// kernelOverTouch times as fast as that touch until the discarded trial
// measures them (on the development VM they ran 2.8 to 3.7 times as fast,
// busy or not), and the arrays are cut to what the slice holds with
// budgetShare of it as the margin.
const (
	touchPasses     = 5
	trialPasses     = 10
	pilotBytes      = 64 << 20
	kernelOverTouch = 2
	budgetShare     = 0.8
)

// memoryCost is the seconds per array byte of a memory test, touch and
// trials, at a touch rate in bytes/s.
func memoryCost(touchRate float64) float64 {
	return touchPasses/touchRate + float64((1+minTrials)*trialPasses)/(kernelOverTouch*touchRate)
}

// memorySize is the array size that fits: planned, or less when the time
// left after touching the pilot bytes (at touchRate bytes/s) cannot hold
// the rest of the test. It is a multiple of the page size, and never less
// than the pilot.
func memorySize(planned, pilot int64, touchRate float64, left time.Duration) int64 {
	if touchRate <= 0 || left <= 0 {
		return min(planned, pilot) &^ (1<<12 - 1)
	}
	// left*share = cost*size - touch of the pilot already done.
	fit := int64((budgetShare*left.Seconds() + touchPasses*float64(pilot)/touchRate) / memoryCost(touchRate))
	return max(min(planned, fit), min(planned, pilot)) &^ (1<<12 - 1)
}

// touch writes STREAM's initial values into [lo, hi) of the arrays, each
// thread its share (first touch by the thread that uses it: NUMA).
func touch(p *pool, threads int, a, b, c []float64, lo, hi int) {
	p.run(func(w int) {
		l, h := chunk(hi-lo, threads, w)
		l, h = l+lo, h+lo
		for i := l; i < h; i++ {
			a[i], b[i], c[i] = 1, 2, 0
		}
		for i := l; i < h; i++ {
			a[i] = 2 * a[i]
		}
	})
}

// runMemory times STREAM's four kernels on threads threads until their
// figures settle or the slice ends, and checks the arrays afterwards. The
// arrays are as large as STREAM's rule asks (ArrayBytes) when the slice
// holds that; else cut to fit it, down to the last-level cache: arrays that
// fit in the cache would measure the cache, so the test is skipped instead,
// naming the --duration that would let it run (share is the test's part of
// the budget).
func runMemory(ctx context.Context, r *Run, opts Options, threads int, until time.Time, share float64) error {
	m := opts.Machine
	planned := opts.ArrayBytes
	if planned <= 0 {
		planned = ArrayBytes(m.LLCBytes, m.MemAvailBytes)
	}
	planned = max(planned&^(1<<12-1), 1<<12)
	a, b, c, free := newArrays(int(planned / 8))
	defer free()
	p := newPool(threads)
	defer p.close()
	// The pilot grows from 1 MiB, doubling, up to pilotBytes or an eighth
	// of the slice, so that it cannot spend a short budget by itself.
	var pilot int64
	t0 := time.Now()
	for step := min(planned, 1<<20); pilot < min(planned, pilotBytes); step *= 2 {
		next := min(pilot+step, planned, pilotBytes) &^ (1<<12 - 1)
		touch(p, threads, a, b, c, int(pilot/8), int(next/8))
		pilot = next
		if time.Since(t0) > time.Until(until)/8 {
			break
		}
	}
	touchRate := touchPasses * float64(pilot) / time.Since(t0).Seconds()
	skip := func(size int64, cost float64) {
		// The budget whose share holds arrays twice the cache (or, the
		// cache unknown, the planned arrays), at the rates measured.
		want := planned
		if m.LLCBytes > 0 {
			want = min(planned, 2*m.LLCBytes)
		}
		need := roundUp(time.Duration(cost * float64(want) / budgetShare / share * float64(time.Second)))
		why := fmt.Sprintf("the time budget allows arrays of %s here, not more than the last-level cache (%s), so the figures would measure the cache",
			units.Bytes(size).Short(), units.Bytes(m.LLCBytes).Short())
		if m.LLCBytes <= 0 || size < 1<<12 {
			why = "the time budget left no time for its trials"
		}
		r.Skipped = append(r.Skipped, Skip{Suite: SuiteMemory, Name: fmt.Sprintf("%d thread%s", threads, plural(threads)),
			Reason: fmt.Sprintf("%s: run with --duration %s or more", why, need)})
	}
	tooSmall := func(size int64) bool { return size < planned && m.LLCBytes > 0 && size <= m.LLCBytes }
	size := memorySize(planned, pilot, touchRate, time.Until(until))
	if tooSmall(size) {
		skip(size, memoryCost(touchRate))
		return nil
	}
	n := int(size / 8)
	a, b, c = a[:n], b[:n], c[:n]
	touch(p, threads, a, b, c, int(pilot/8), n)
	impl := hostMem(Streaming(size, m.LLCBytes))
	trial := func() []time.Duration {
		return []time.Duration{
			p.run(func(w int) { lo, hi := chunk(n, threads, w); impl.copy(c[lo:hi], a[lo:hi]) }),
			p.run(func(w int) { lo, hi := chunk(n, threads, w); impl.scale(b[lo:hi], c[lo:hi], streamScalar) }),
			p.run(func(w int) { lo, hi := chunk(n, threads, w); impl.add(c[lo:hi], a[lo:hi], b[lo:hi]) }),
			p.run(func(w int) { lo, hi := chunk(n, threads, w); impl.triad(a[lo:hi], b[lo:hi], c[lo:hi], streamScalar) }),
		}
	}
	t0 = time.Now()
	trial() // STREAM discards the first trial
	// Now the kernels' own speed is known: cut the arrays further (a prefix
	// has the same values as the whole) if minTrials do not fit.
	if d := time.Since(t0); d > 0 {
		if fit := int64(float64(size) * budgetShare * time.Until(until).Seconds() / (minTrials * d.Seconds())); fit < size {
			kernelRate := trialPasses * float64(size) / d.Seconds()
			size = fit &^ (1<<12 - 1)
			if size < 1<<12 || tooSmall(size) {
				skip(max(size, 0), touchPasses/touchRate+float64((1+minTrials)*trialPasses)/kernelRate)
				return nil
			}
			n = int(size / 8)
			a, b, c = a[:n], b[:n], c[:n]
		}
	}
	times, err := runTrials(ctx, until, len(streamKernels), trial)
	if err != nil {
		return err
	}
	if err := checkStream(a, b, c, len(times[0])+1); err != nil {
		r.Skipped = append(r.Skipped, Skip{Suite: SuiteMemory, Reason: err.Error()})
		return nil
	}
	stores := "write-allocate"
	if impl.streaming {
		stores = "non-temporal"
	}
	note := "theoretical bandwidth needs the memory configuration (DIMM speed and channels), which devctl does not read"
	if size < planned {
		note += fmt.Sprintf("; the arrays were cut from %s (4x the last-level cache, STREAM's rule) to %s to fit the time budget: a longer --duration keeps them whole",
			units.Bytes(planned).Short(), units.Bytes(size).Short())
	}
	for i, sk := range streamKernels {
		res := Result{
			Suite: SuiteMemory, Name: sk.name, Threads: threads, Unit: UnitGBs, Source: SourceMeasured,
			Method: Method{
				Kernel:          streamFormula(sk.name),
				ISA:             impl.isa,
				Stores:          stores,
				ArrayBytes:      size,
				BytesPerElement: sk.words * 8,
				Verified:        true,
				Pinned:          p.pinned,
				Note:            note,
			},
		}
		res.Value = spread(&res.Method, float64(sk.words*8)*float64(n), times[i])
		r.Results = append(r.Results, res)
	}
	return nil
}

// heapArrays are three arrays from the Go heap, handed back to the OS when
// the test ends.
func heapArrays(n int) (a, b, c []float64, free func()) {
	return make([]float64, n), make([]float64, n), make([]float64, n), debug.FreeOSMemory
}

// roundUp rounds a suggested duration up to whole seconds.
func roundUp(d time.Duration) time.Duration {
	return ((d + time.Second - 1) / time.Second) * time.Second
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
		Suite: SuiteLink, Name: "pcie", Unit: UnitGBs, Value: cur, Source: SourceComputed,
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
