package supervise

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/envvar"
	"github.com/devctl/devctl/internal/explain"
)

// Step ids, recorded in the history and the report. They name what changed,
// never a value.
const (
	StepAllocator      = "allocator"          // PYTORCH_CUDA_ALLOC_CONF expandable segments
	StepHalveBatch     = "halve_batch"        // --batch-env halved (--accum-env doubled)
	StepLowerPrecision = "lower_precision"    // --precision-env one step down
	StepCPU            = "cpu"                // the CPU, with --allow-cpu
	StepMPSFallback    = "mps_fallback"       // PYTORCH_ENABLE_MPS_FALLBACK=1
	StepXLANoPrealloc  = "xla_no_preallocate" // XLA_PYTHON_CLIENT_PREALLOCATE=false
	StepXLAMemFraction = "xla_lower_fraction" // XLA_PYTHON_CLIENT_MEM_FRACTION one strategy down
	StepNextDevice     = "next_device"        // the next device in priority order
)

// Candidate is a device the command may run on, with the environment that
// selects and configures it (what `recommend -o env` prints for it).
type Candidate struct {
	ID      string       `json:"id"`
	Backend string       `json:"backend"`
	Env     []envvar.Var `json:"-"`
	// Support is what the device computes in (internal/capability's
	// table): lowering the precision only picks what it supports.
	Support capability.Support `json:"-"`
}

// IntVar is a number the command reads from a variable (--batch-env).
type IntVar struct {
	Name  string
	Value int
}

// StrVar is a word the command reads from a variable (--precision-env).
type StrVar struct {
	Name  string
	Value string
}

// LadderConfig is what the user allowed devctl to change.
type LadderConfig struct {
	// Devices in priority order; the first is where the run starts.
	Devices []Candidate
	// Batch and Accum are the batch-size and gradient-accumulation
	// variables (nil: not given). Halving Batch doubles Accum so the
	// effective batch stays.
	Batch, Accum *IntVar
	// Precision is the precision variable (fp32, bf16, fp16, 8bit, 4bit
	// or the torch spellings float32, bfloat16, float16, int8, int4).
	Precision *StrVar
	// AllowCPU lets the ladder end on the CPU (device.fallback_enabled,
	// or --allow-cpu).
	AllowCPU bool
}

// Backends the rungs name.
const (
	backendCUDA = "cuda"
	backendROCm = "rocm"
	backendMPS  = "mps"
	backendCPU  = "cpu"
)

// jaxGPU tells the backends whose JAX memory is the GPU allocator that
// XLA_PYTHON_CLIENT_PREALLOCATE and XLA_PYTHON_CLIENT_MEM_FRACTION
// control: JAX's "GPU memory allocation" page describes them for GPUs
// only (https://docs.jax.dev/en/latest/gpu_memory_allocation.html); a TPU
// or the CPU ignores them.
func jaxGPU(b string) bool { return b == backendCUDA || b == backendROCm }

// cpuOff says why the CPU rung is not taken.
const cpuOff = "the CPU rung is off (device.fallback_enabled is false, or --allow-cpu=false)"

// Ladder walks the recovery steps of one supervised run, cheapest first.
// It keeps the state of every knob: each Next call moves one step further.
type Ladder struct {
	cfg       LadderConfig
	dev       int
	switched  bool // the device changed: its selection variables override the inherited ones
	set       map[string]string
	order     []string
	deadBack  map[string]bool
	batch     int
	accum     int
	precision string
}

// MaxKnob bounds the batch and accumulation values, so halving ends after
// at most 20 steps and batch × accumulation cannot overflow.
const MaxKnob = 1 << 20

// NewLadder starts a ladder on cfg.Devices[0]. It checks the knobs.
func NewLadder(cfg LadderConfig) (*Ladder, error) {
	if len(cfg.Devices) == 0 {
		return nil, fmt.Errorf("no device to run on")
	}
	l := &Ladder{cfg: cfg, set: map[string]string{}, deadBack: map[string]bool{}}
	if b := cfg.Batch; b != nil {
		if b.Value < 1 || b.Value > MaxKnob {
			return nil, fmt.Errorf("batch %s=%d: want a whole number from 1 to %d", b.Name, b.Value, MaxKnob)
		}
		l.batch = b.Value
		l.put(b.Name, strconv.Itoa(b.Value))
	}
	if a := cfg.Accum; a != nil {
		if a.Value < 1 || a.Value > MaxKnob {
			return nil, fmt.Errorf("accumulation %s=%d: want a whole number from 1 to %d", a.Name, a.Value, MaxKnob)
		}
		l.accum = a.Value
		l.put(a.Name, strconv.Itoa(a.Value))
	}
	if p := cfg.Precision; p != nil {
		if v, err := capability.ParsePrecision(p.Value); err != nil || !slices.Contains(capability.Precisions, v) {
			return nil, fmt.Errorf("precision %s=%q: want one of fp32, bf16, fp16, 8bit, 4bit, float32, bfloat16, float16, int8, int4", p.Name, p.Value)
		}
		l.precision = p.Value
		l.put(p.Name, p.Value)
	}
	return l, nil
}

// Device is the device the next attempt runs on.
func (l *Ladder) Device() Candidate { return l.cfg.Devices[l.dev] }

// OnFirst reports whether the next attempt runs on the device the run
// started on.
func (l *Ladder) OnFirst() bool { return l.dev == 0 }

// Batch is the batch size the next attempt runs with (0: no --batch-env).
func (l *Ladder) Batch() int { return l.batch }

// Precision is the precision the next attempt runs with, as the user
// spells it ("": no --precision-env).
func (l *Ladder) Precision() string { return l.precision }

func (l *Ladder) put(name, value string) {
	if _, ok := l.set[name]; !ok {
		l.order = append(l.order, name)
	}
	l.set[name] = value
}

// Env builds the child's environment from the inherited one: the device's
// variables fill what the user did not set (the user's CUDA_VISIBLE_DEVICES
// from a scheduler wins) until the ladder switches device; then, and for
// every recovery change, devctl's values win.
func (l *Ladder) Env(inherited []string) []string {
	eff := map[string]string{}
	var names []string
	add := func(k, v string, override bool) {
		if _, ok := eff[k]; ok && !override {
			return
		}
		if _, ok := eff[k]; !ok {
			names = append(names, k)
		}
		eff[k] = v
	}
	for _, kv := range inherited {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		add(k, v, true)
	}
	for _, e := range l.Device().Env {
		add(e.Name, e.Value, l.switched)
	}
	for _, k := range l.order {
		add(k, l.set[k], true)
	}
	out := make([]string, 0, len(names))
	for _, k := range names {
		out = append(out, k+"="+eff[k])
	}
	return out
}

// lookup reads the effective value of a variable.
func (l *Ladder) lookup(inherited []string, name string) (string, bool) {
	env := l.Env(inherited)
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, _ := strings.Cut(env[i], "="); k == name {
			return v, true
		}
	}
	return "", false
}

// Step is one recovery change.
type Step struct {
	ID string `json:"step"`
	// Why says in one line what failed and what the change does.
	Why string `json:"why"`
	// Set are the variables the change sets (devctl's own values).
	Set []envvar.Var `json:"set,omitempty"`
	// Device is the device switched to, "" when it stays.
	Device string `json:"device,omitempty"`
}

// Recoverable tells the categories the ladder has steps for.
func Recoverable(c explain.Category) bool {
	switch c {
	case explain.CategoryOutOfMemory, explain.CategoryXLAResourceExhausted, explain.CategoryMPSUnsupportedOp:
		return true
	}
	return deviceFailure(c) != 0
}

// deviceFailure: 1 when the category means this one device failed, 2 when
// the whole backend is unusable on this machine; 0 otherwise.
func deviceFailure(c explain.Category) int {
	switch c {
	case explain.CategoryCUDALaunchFailure, explain.CategoryROCmHIPError:
		return 1
	case explain.CategoryNoGPUFound, explain.CategoryCUDADriverMismatch, explain.CategoryXLATPUInit:
		return 2
	}
	return 0
}

// Next moves to the next recovery step for a failure of category c, given
// the inherited environment. ok is false when nothing is left to try; why
// then says what was exhausted.
func (l *Ladder) Next(c explain.Category, inherited []string) (s Step, ok bool, why string) {
	dev := l.Device()
	switch {
	case c == explain.CategoryOutOfMemory:
		// PyTorch's expandable segments are a CUDA caching-allocator
		// setting; ROCm's tests do not use them, MPS, XLA and the CPU have
		// other allocators.
		if dev.Backend == backendCUDA {
			if v, _ := l.lookup(inherited, "PYTORCH_CUDA_ALLOC_CONF"); !strings.Contains(v, "expandable_segments:True") {
				nv := "expandable_segments:True"
				if v != "" {
					nv = v + "," + nv
				}
				return l.change(Step{ID: StepAllocator, Why: "let PyTorch's CUDA allocator grow segments instead of fragmenting"}, envvar.Var{Name: "PYTORCH_CUDA_ALLOC_CONF", Value: nv}), true, ""
			}
		}
		return l.memory(inherited)
	case c == explain.CategoryXLAResourceExhausted:
		if !jaxGPU(dev.Backend) {
			// A TPU's HBM (or the host's memory) is not JAX's GPU
			// allocator: what helps is a smaller batch or precision.
			return l.memory(inherited)
		}
		if v, _ := l.lookup(inherited, "XLA_PYTHON_CLIENT_PREALLOCATE"); !strings.EqualFold(v, "false") {
			return l.change(Step{ID: StepXLANoPrealloc, Why: "let JAX allocate on demand instead of preallocating 75% of the device"}, envvar.Var{Name: "XLA_PYTHON_CLIENT_PREALLOCATE", Value: "false"}), true, ""
		}
		cur := 0.75 // JAX's documented default
		if v, ok := l.lookup(inherited, "XLA_PYTHON_CLIENT_MEM_FRACTION"); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				cur = f
			}
		}
		for _, f := range []float64{0.75, 0.60} { // devctl's balanced and conservative strategies
			if f < cur-1e-9 {
				return l.change(Step{ID: StepXLAMemFraction, Why: fmt.Sprintf("cap JAX at %.2f of the device (was %.2f)", f, cur)}, envvar.Var{Name: "XLA_PYTHON_CLIENT_MEM_FRACTION", Value: strconv.FormatFloat(f, 'f', 2, 64)}), true, ""
			}
		}
		return l.memory(inherited)
	case c == explain.CategoryMPSUnsupportedOp:
		if dev.Backend != backendMPS {
			return Step{}, false, fmt.Sprintf("%s on %s: PYTORCH_ENABLE_MPS_FALLBACK applies to MPS only", c, dev.ID)
		}
		if v, _ := l.lookup(inherited, "PYTORCH_ENABLE_MPS_FALLBACK"); v != "1" {
			return l.change(Step{ID: StepMPSFallback, Why: "run the operators MPS lacks on the CPU"}, envvar.Var{Name: "PYTORCH_ENABLE_MPS_FALLBACK", Value: "1"}), true, ""
		}
		return l.toCPU("PYTORCH_ENABLE_MPS_FALLBACK=1 was already set")
	case deviceFailure(c) != 0:
		if deviceFailure(c) == 2 {
			l.deadBack[dev.Backend] = true
		}
		for i := l.dev + 1; i < len(l.cfg.Devices); i++ {
			d := l.cfg.Devices[i]
			if l.deadBack[d.Backend] || d.ID == dev.ID || (d.Backend == backendCPU && !l.cfg.AllowCPU) {
				continue
			}
			id := StepNextDevice
			if d.Backend == backendCPU {
				id = StepCPU
			}
			return l.switchTo(i, Step{ID: id, Why: fmt.Sprintf("%s failed; next device in priority order", dev.ID)}), true, ""
		}
		why := "no other device to try"
		if !l.cfg.AllowCPU {
			why += " (" + cpuOff + ")"
		}
		return Step{}, false, why
	}
	return Step{}, false, fmt.Sprintf("%s is not a failure a changed environment can fix", c)
}

// memory is the shared tail of the out-of-memory ladders: batch, precision,
// CPU.
func (l *Ladder) memory(inherited []string) (Step, bool, string) {
	if b := l.cfg.Batch; b != nil && l.batch > 1 {
		eff := l.batch * max(l.accum, 1)
		nb := l.batch / 2
		why := fmt.Sprintf("halve the batch (%d to %d)", l.batch, nb)
		set := []envvar.Var{{Name: b.Name, Value: strconv.Itoa(nb)}}
		if a := l.cfg.Accum; a != nil {
			na := (eff + nb - 1) / nb
			why += fmt.Sprintf(", accumulate %d steps to keep the effective batch of %d", na, eff)
			set = append(set, envvar.Var{Name: a.Name, Value: strconv.Itoa(na)})
			l.accum = na
		}
		l.batch = nb
		return l.change(Step{ID: StepHalveBatch, Why: why}, set...), true, ""
	}
	if p := l.cfg.Precision; p != nil {
		if next, ok := lowerPrecision(l.precision, l.Device().Support); ok {
			why := fmt.Sprintf("lower the precision (%s to %s)", l.precision, next)
			l.precision = next
			return l.change(Step{ID: StepLowerPrecision, Why: why}, envvar.Var{Name: p.Name, Value: next}), true, ""
		}
	}
	var tried []string
	if l.cfg.Batch != nil {
		tried = append(tried, "the batch is 1")
	}
	if l.cfg.Precision != nil {
		tried = append(tried, "the precision is the lowest "+l.Device().ID+" supports")
	}
	if len(tried) == 0 {
		tried = append(tried, "no --batch-env or --precision-env to change")
	}
	return l.toCPU(strings.Join(tried, ", "))
}

func (l *Ladder) toCPU(exhausted string) (Step, bool, string) {
	if l.Device().Backend == backendCPU {
		return Step{}, false, exhausted + "; already on the CPU"
	}
	if !l.cfg.AllowCPU {
		return Step{}, false, exhausted + "; " + cpuOff
	}
	for i, d := range l.cfg.Devices {
		if d.Backend == backendCPU {
			return l.switchTo(i, Step{ID: StepCPU, Why: exhausted + "; run on the CPU"}), true, ""
		}
	}
	return Step{}, false, exhausted + "; no CPU device was probed"
}

func (l *Ladder) change(s Step, set ...envvar.Var) Step {
	for _, e := range set {
		l.put(e.Name, e.Value)
	}
	s.Set = set
	return s
}

// hideAccelerators are set (empty) on the CPU so frameworks do not pick a
// GPU up by themselves: CUDA and HIP treat an empty list as no device.
var hideAccelerators = []string{"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"}

func (l *Ladder) switchTo(i int, s Step) Step {
	l.dev, l.switched = i, true
	to := l.Device()
	s.Device = to.ID
	s.Set = append(s.Set, to.Env...)
	if to.Backend == backendCPU {
		for _, k := range hideAccelerators {
			l.put(k, "")
			s.Set = append(s.Set, envvar.Var{Name: k, Value: ""})
		}
	}
	return s
}

// lowerPrecision gives the next lower precision the device supports, in
// the spelling family of cur: devctl's fp32/bf16/8bit, or torch's
// float32/bfloat16/int8 when the user wrote one. From fp32 it tries bf16
// (fp16 when the device has no bf16), then 8-bit, then 4-bit, skipping
// what the device does not compute in (a TPU stops at bf16 before v5e,
// the CPU where it lacks the instructions).
func lowerPrecision(cur string, sup capability.Support) (string, bool) {
	p, err := capability.ParsePrecision(cur)
	if err != nil {
		return "", false
	}
	for {
		next, ok := p.Lower(sup.BF16)
		if !ok {
			return "", false
		}
		if sup.Has(next) {
			if capability.IsTorchSpelling(cur) {
				return next.TorchName(), true
			}
			return string(next), true
		}
		p = next
	}
}
