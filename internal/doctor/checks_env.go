package doctor

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/oomsim"
)

// VisibleProblem is one finding about a *_VISIBLE_DEVICES value.
type VisibleProblem struct {
	Msg  string
	Args Args
	Fail bool
}

// CheckVisibleDevices judges a CUDA_VISIBLE_DEVICES-style list against the
// number of devices (count < 0: unknown) and their UUIDs (may be empty).
// CUDA stops reading the list at the first invalid entry, so every problem
// here hides devices silently rather than failing loudly.
func CheckVisibleDevices(name, value string, count int, uuids []string) []VisibleProblem {
	v := strings.TrimSpace(value)
	if v == "" || v == "NoDevFiles" || v == "-1" {
		return []VisibleProblem{{Msg: "hidden", Args: Args{"var": name, "value": value}}}
	}
	var out []VisibleProblem
	seen := map[string]bool{}
	var nIdx, nUUID, nMIG int
	for _, tok := range strings.Split(v, ",") {
		tok = strings.TrimSpace(tok)
		switch {
		case tok == "":
			out = append(out, VisibleProblem{Msg: "bad_entry", Args: Args{"var": name, "entry": "(empty)", "value": value}, Fail: true})
			continue
		case strings.HasPrefix(tok, "MIG-"):
			nMIG++
		case strings.HasPrefix(tok, "GPU-"):
			nUUID++
			if len(uuids) > 0 && !hasPrefixIn(uuids, tok) {
				out = append(out, VisibleProblem{Msg: "unknown_uuid", Args: Args{"var": name, "entry": tok}, Fail: true})
			}
		default:
			n, err := strconv.Atoi(tok)
			if err != nil || n < 0 {
				out = append(out, VisibleProblem{Msg: "bad_entry", Args: Args{"var": name, "entry": tok, "value": value}, Fail: true})
				continue
			}
			nIdx++
			if count >= 0 && n >= count {
				out = append(out, VisibleProblem{Msg: "out_of_range", Args: Args{"var": name, "entry": tok, "count": strconv.Itoa(count)}, Fail: true})
			}
		}
		if seen[tok] {
			out = append(out, VisibleProblem{Msg: "duplicate", Args: Args{"var": name, "entry": tok}, Fail: true})
		}
		seen[tok] = true
	}
	if nIdx > 0 && (nUUID > 0 || nMIG > 0) {
		out = append(out, VisibleProblem{Msg: "mixed", Args: Args{"var": name, "value": value}})
	}
	if nMIG > 1 {
		out = append(out, VisibleProblem{Msg: "multi_mig", Args: Args{"var": name, "count": strconv.Itoa(nMIG)}})
	}
	return out
}

func hasPrefixIn(list []string, tok string) bool {
	for _, u := range list {
		if strings.HasPrefix(u, tok) || strings.HasPrefix(tok, u) {
			return true
		}
	}
	return false
}

var checkVisibleDevices = &Check{
	ID:  "env.visible_devices",
	Run: runVisibleDevices,
}

func runVisibleDevices(ctx context.Context, e *Env) Finding {
	h := e.Host
	nvCount, amdCount := -1, -1
	var uuids, names []string
	cuda := e.Devices("cuda")
	if len(cuda) > 0 {
		nvCount = len(cuda)
		for _, d := range cuda {
			if d.UUID != nil {
				uuids = append(uuids, *d.UUID)
			}
			names = append(names, d.Name)
		}
	} else if nv, _ := e.NVIDIA(ctx); nv != nil && nv.Usable {
		nvCount = len(nv.Devices)
		for _, d := range nv.Devices {
			if d.UUID != "" {
				uuids = append(uuids, d.UUID)
			}
			names = append(names, d.Name)
		}
	} else if g := e.pciOf(VendorNVIDIA, true); len(g) > 0 {
		nvCount = len(g)
		for _, d := range g {
			names = append(names, strconv.FormatUint(uint64(d.Device), 16))
		}
	}
	if r := e.Devices("rocm"); len(r) > 0 {
		amdCount = len(r)
	}
	var set []string
	worst := func(ps []VisibleProblem, ev []Evidence) *Finding {
		for _, fail := range []bool{true, false} {
			for _, p := range ps {
				if p.Fail == fail {
					st := Warn
					if p.Fail {
						st = Fail
					}
					return &Finding{Status: st, Msg: p.Msg, Args: p.Args, Evidence: ev}
				}
			}
		}
		return nil
	}
	cudaVal, cudaSet := h.LookupEnv("CUDA_VISIBLE_DEVICES")
	if cudaSet {
		set = append(set, "CUDA_VISIBLE_DEVICES="+cudaVal)
		if nvCount != -1 || amdCount == -1 {
			ps := CheckVisibleDevices("CUDA_VISIBLE_DEVICES", cudaVal, nvCount, uuids)
			if f := worst(ps, []Evidence{{"env CUDA_VISIBLE_DEVICES", cudaVal}}); f != nil && (nvCount > 0 || f.Msg != "hidden") {
				return *f
			}
		}
	}
	hipVal, hipSet := h.LookupEnv("HIP_VISIBLE_DEVICES")
	if hipSet {
		set = append(set, "HIP_VISIBLE_DEVICES="+hipVal)
		ps := CheckVisibleDevices("HIP_VISIBLE_DEVICES", hipVal, amdCount, nil)
		if f := worst(ps, []Evidence{{"env HIP_VISIBLE_DEVICES", hipVal}}); f != nil && (amdCount > 0 || f.Msg != "hidden") {
			return *f
		}
		if cudaSet && amdCount > 0 && nvCount <= 0 && cudaVal != hipVal {
			return Finding{Status: Warn, Msg: "hip_cuda", Args: Args{"hip": hipVal, "cuda": cudaVal},
				Evidence: []Evidence{{"env HIP_VISIBLE_DEVICES", hipVal}, {"env CUDA_VISIBLE_DEVICES", cudaVal}}}
		}
	}
	if rocr, ok := h.LookupEnv("ROCR_VISIBLE_DEVICES"); ok {
		set = append(set, "ROCR_VISIBLE_DEVICES="+rocr)
		if hipSet && hipVal != rocr {
			return Finding{Status: Warn, Msg: "rocr_only", Args: Args{"rocr": rocr, "hip": hipVal},
				Evidence: []Evidence{{"env ROCR_VISIBLE_DEVICES", rocr}, {"env HIP_VISIBLE_DEVICES", hipVal}}}
		}
	}
	order, orderSet := h.LookupEnv("CUDA_DEVICE_ORDER")
	if orderSet {
		set = append(set, "CUDA_DEVICE_ORDER="+order)
		if order != "FASTEST_FIRST" && order != "PCI_BUS_ID" {
			return Finding{Status: Fail, Msg: "bad_order", Args: Args{"value": order}, Evidence: []Evidence{{"env CUDA_DEVICE_ORDER", order}}}
		}
	}
	if order != "PCI_BUS_ID" && distinct(names) > 1 {
		v := order
		if !orderSet {
			v = "unset (FASTEST_FIRST)"
		}
		return Finding{Status: Warn, Msg: "order", Args: Args{"names": strings.Join(uniq(names), ", "), "value": v},
			Evidence: []Evidence{{"env CUDA_DEVICE_ORDER", v}}}
	}
	summary := "no visibility variables set; all devices visible"
	if len(set) > 0 {
		summary = strings.Join(set, ", ")
	}
	return Finding{Status: Pass, Msg: "pass", Args: Args{"summary": summary}}
}

func distinct(ss []string) int { return len(uniq(ss)) }

func uniq(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

var checkEnvDevctl = &Check{
	ID:  "env.devctl",
	Run: runEnvDevctl,
}

// ValidateDevctlEnv checks one DEVCTL_* variable; "" means valid.
func ValidateDevctlEnv(name, value string) string {
	v := strings.ToLower(strings.TrimSpace(value))
	if v == "" {
		return ""
	}
	switch name {
	case "DEVCTL_DEVICE":
		if _, err := backend.ParsePreference(v); err != nil {
			return err.Error()
		}
	case "DEVCTL_PRECISION":
		if p, err := capability.ParsePrecision(v); v != string(capability.Auto) && (err != nil || !slices.Contains(config.Precisions, p)) {
			return "want one of " + strings.Join(capability.Names(config.Precisions), ", ")
		}
	case "DEVCTL_MEMORY_STRATEGY":
		if _, ok := oomsim.Parse(v, config.Strategies); !ok {
			return "want one of " + oomsim.List(config.Strategies)
		}
	case "DEVCTL_MEMORY_FRACTION":
		if _, err := config.ParseFraction(v); err != nil {
			return err.Error()
		}
	case "DEVCTL_FALLBACK_ENABLED":
		if !isBool(v) {
			return "want true or false"
		}
	case "DEVCTL_SYSROOT":
		if !strings.HasPrefix(value, "/") {
			return "want an absolute directory path"
		}
	}
	return ""
}

func isBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "false", "1", "0", "yes", "no", "on", "off":
		return true
	}
	return false
}

var devctlVars = []string{"DEVCTL_DEVICE", "DEVCTL_PRECISION", "DEVCTL_MEMORY_STRATEGY", "DEVCTL_MEMORY_FRACTION", "DEVCTL_FALLBACK_ENABLED", "DEVCTL_SYSROOT"}

func runEnvDevctl(_ context.Context, e *Env) Finding {
	set, fail := readEnv(e, "bad_env", envRule{names: devctlVars, why: ValidateDevctlEnv})
	if fail != nil {
		return *fail
	}
	if e.ConfigErr != nil {
		return Finding{Status: Fail, Msg: "bad_config", Args: Args{"error": e.ConfigErr.Error()}}
	}
	summary := "no DEVCTL_* variables set; configuration loads"
	if len(set) > 0 {
		summary = strings.Join(set, ", ") + "; configuration loads"
	}
	return Finding{Status: Pass, Msg: "pass", Args: Args{"summary": summary}}
}
