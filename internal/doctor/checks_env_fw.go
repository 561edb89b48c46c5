package doctor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// allocBoolKeys are PYTORCH_CUDA_ALLOC_CONF options whose value must be
// exactly True or False (c10's parser compares the strings).
var allocBoolKeys = map[string]bool{
	"expandable_segments": true, "release_lock_on_cudamalloc": true, "release_lock_on_hipmalloc": true,
	"pinned_use_cuda_host_register": true, "pinned_use_hip_host_register": true,
	"pinned_use_background_threads": true, "graph_capture_record_stream_reuse": true,
}

// ParseAllocConf validates a PYTORCH_CUDA_ALLOC_CONF value the way
// c10's CUDAAllocatorConfig reads it: comma-separated key:value pairs,
// roundup_power2_divisions may be a bracketed list. It returns nil or an
// error naming the bad part and what is accepted.
func ParseAllocConf(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	for _, item := range splitTopLevel(s) {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if strings.Contains(item, "=") && !strings.Contains(item, ":") {
			return fmt.Errorf("%q uses '=', want key:value (e.g. expandable_segments:True)", item)
		}
		k, v, ok := strings.Cut(item, ":")
		if !ok {
			return fmt.Errorf("%q has no ':', want key:value", item)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case allocBoolKeys[k]:
			if v != "True" && v != "False" {
				return fmt.Errorf("%s:%s: want True or False (capitalised)", k, v)
			}
		case k == "max_split_size_mb":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 20 {
				return fmt.Errorf("max_split_size_mb:%s: want a whole number of MiB greater than 20", v)
			}
		case k == "max_non_split_rounding_mb", k == "pinned_reserve_segment_size_mb":
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
				return fmt.Errorf("%s:%s: want a whole number of MiB", k, v)
			}
		case k == "garbage_collection_threshold":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 || f >= 1 {
				return fmt.Errorf("garbage_collection_threshold:%s: want a number between 0 and 1 (exclusive)", v)
			}
		case k == "per_process_memory_fraction":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				return fmt.Errorf("per_process_memory_fraction:%s: want a number in [0, 1]", v)
			}
		case k == "backend":
			if v != "native" && v != "cudaMallocAsync" {
				return fmt.Errorf("backend:%s: want native or cudaMallocAsync", v)
			}
		case k == "roundup_power2_divisions":
			if err := checkRoundup(v); err != nil {
				return err
			}
		case k == "pinned_num_register_threads":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 128 || n&(n-1) != 0 {
				return fmt.Errorf("pinned_num_register_threads:%s: want a power of two up to 128", v)
			}
		default:
			return fmt.Errorf("unknown option %q (PyTorch refuses it: \"Unrecognized CachingAllocator option\")", k)
		}
	}
	return nil
}

func checkRoundup(v string) error {
	pow2 := func(s string) bool {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		return err == nil && n >= 0 && (n == 0 || n&(n-1) == 0)
	}
	if strings.HasPrefix(v, "[") {
		if !strings.HasSuffix(v, "]") {
			return fmt.Errorf("roundup_power2_divisions:%s: unclosed '['", v)
		}
		for _, p := range strings.Split(v[1:len(v)-1], ",") {
			k, d, ok := strings.Cut(p, ":")
			if !ok || !pow2(d) || (strings.TrimSpace(k) != ">" && !pow2(k)) {
				return fmt.Errorf("roundup_power2_divisions:%s: want [size:divisions,...,>:divisions] with powers of two", v)
			}
		}
		return nil
	}
	if !pow2(v) {
		return fmt.Errorf("roundup_power2_divisions:%s: want a power of two", v)
	}
	return nil
}

// splitTopLevel splits on commas outside brackets.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// envRule validates some variables: why says what is wrong with a value,
// "" when it is valid.
type envRule struct {
	names []string
	why   func(name, value string) string
	// nameOnly lists the variable without its value in the summary
	// (XLA_FLAGS is long).
	nameOnly bool
}

// readEnv reads the rules' variables in order. It returns what is set, for
// a passing summary, and the first invalid value as a failing finding of
// message key bad, nil when every value is valid.
func readEnv(e *Env, bad string, rules ...envRule) (set []string, fail *Finding) {
	for _, r := range rules {
		for _, name := range r.names {
			v, ok := e.Host.LookupEnv(name)
			if !ok {
				continue
			}
			if r.nameOnly {
				set = append(set, name)
			} else {
				set = append(set, name+"="+v)
			}
			if why := r.why(name, v); why != "" {
				return set, &Finding{Status: Fail, Msg: bad, Args: Args{"var": name, "value": v, "why": why}, Evidence: []Evidence{{"env " + name, v}}}
			}
		}
	}
	return set, nil
}

// envCheck is a check of framework variables: the first invalid one fails,
// else it passes listing what is set.
func envCheck(e *Env, rules []envRule) Finding {
	set, fail := readEnv(e, "bad", rules...)
	if fail != nil {
		return *fail
	}
	summary := "none set"
	if len(set) > 0 {
		summary = strings.Join(set, ", ")
	}
	return Finding{Status: Pass, Msg: "pass", Args: Args{"summary": summary}}
}

// xlaVars are the JAX/XLA variables env.xla judges.
var xlaVars = []envRule{
	{names: []string{"XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_CLIENT_MEM_FRACTION"}, why: func(_, v string) string {
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || f <= 0 || f > 1 {
			return "want a fraction in (0, 1], e.g. .75"
		}
		return ""
	}},
	{names: []string{"XLA_PYTHON_CLIENT_PREALLOCATE"}, why: func(_, v string) string {
		if !isBool(v) {
			return "want true or false"
		}
		return ""
	}},
	{names: []string{"XLA_PYTHON_CLIENT_ALLOCATOR"}, why: func(_, v string) string {
		if !slices.Contains([]string{"default", "platform", "bfc", "cuda_async"}, strings.TrimSpace(v)) {
			return "want default, platform, bfc or cuda_async"
		}
		return ""
	}},
	{names: []string{"XLA_FLAGS"}, nameOnly: true, why: func(_, v string) string {
		for _, tok := range strings.Fields(v) {
			if !strings.HasPrefix(tok, "--") || len(tok) < 3 {
				return fmt.Sprintf("%q is not a --flag (want space-separated --name=value)", tok)
			}
		}
		return ""
	}},
	{names: []string{"JAX_PLATFORMS"}, why: func(_, v string) string {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if p != "" && !slices.Contains([]string{"cpu", "cuda", "gpu", "rocm", "tpu", "metal", "METAL", "neuron", "iree"}, p) {
				return fmt.Sprintf("unknown platform %q (want cpu, cuda, gpu, rocm, tpu or metal)", p)
			}
		}
		return ""
	}},
}

var checkEnvXLA = &Check{
	ID:  "env.xla",
	Run: func(_ context.Context, e *Env) Finding { return envCheck(e, xlaVars) },
}

// pytorchVars are the PyTorch variables env.pytorch judges.
var pytorchVars = []envRule{
	{names: []string{"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF"}, why: func(_, v string) string {
		if err := ParseAllocConf(v); err != nil {
			return err.Error()
		}
		return ""
	}},
	{names: []string{"PYTORCH_MPS_HIGH_WATERMARK_RATIO", "PYTORCH_MPS_LOW_WATERMARK_RATIO"}, why: func(_, v string) string {
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || f < 0 {
			return "want a non-negative number (e.g. 1.4)"
		}
		return ""
	}},
	{names: []string{"PYTORCH_ENABLE_MPS_FALLBACK", "PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_NVML_BASED_CUDA_CHECK"}, why: func(_, v string) string {
		if t := strings.TrimSpace(v); t != "0" && t != "1" {
			return "want 0 or 1"
		}
		return ""
	}},
}

var checkEnvPytorch = &Check{
	ID:  "env.pytorch",
	Run: func(_ context.Context, e *Env) Finding { return envCheck(e, pytorchVars) },
}
