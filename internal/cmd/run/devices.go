package run

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/envvar"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/recommend"
	"github.com/devctl/devctl/internal/supervise"
)

// visibilityVar is the variable that narrows a backend to some of its
// devices (what recommend's environment sets for one device).
var visibilityVar = map[backend.Backend]string{
	backend.CUDA:   "CUDA_VISIBLE_DEVICES",
	backend.ROCm:   "HIP_VISIBLE_DEVICES",
	backend.XLA:    "TPU_VISIBLE_CHIPS",
	backend.XPU:    "ONEAPI_DEVICE_SELECTOR",
	backend.Neuron: "NEURON_RT_VISIBLE_CORES",
}

// group is the devices of one backend a candidate runs on.
type group struct {
	backend backend.Backend
	members []probe.Device // in the probe's order
	all     bool           // every device of the backend the probe saw
}

// id names the group the way the report and messages show it: cuda:0
// for one device, cuda:0,1 or cuda:0-7 for several.
func (g group) id() string {
	if len(g.members) == 1 {
		return g.members[0].ID
	}
	idx := make([]int, len(g.members))
	for i, d := range g.members {
		idx[i] = d.Index
	}
	contiguous := true
	for i := 1; i < len(idx); i++ {
		contiguous = contiguous && idx[i] == idx[i-1]+1
	}
	if contiguous && len(idx) > 2 {
		return fmt.Sprintf("%s:%d-%d", g.backend, idx[0], idx[len(idx)-1])
	}
	parts := make([]string, len(idx))
	for i, n := range idx {
		parts[i] = strconv.Itoa(n)
	}
	return string(g.backend) + ":" + strings.Join(parts, ",")
}

// groups lists the devices a run may use, in priority order, the chosen
// one first. Every device of the machine stays visible unless the user
// asked for fewer: --device cuda:1 runs on that one device (the other
// devices follow one by one, as the next device to try), --devices N on
// the first N of the chosen backend; otherwise the first candidate is
// every usable device of the chosen backend, so torchrun or accelerate see
// all of them, and each further backend is a candidate with all of its
// devices.
func (o *Options) groups(rep *probe.Report, cfg *config.Config) ([]group, error) {
	chosen := ""
	if rep.Selection != nil {
		chosen = rep.Selection.Chosen
	}
	priority := cfg.Device.PlatformPriority
	if len(priority) == 0 {
		priority = backend.All()
	}
	byBackend := map[backend.Backend][]probe.Device{}
	total := map[backend.Backend]int{}
	var first *probe.Device
	for i, d := range rep.Devices {
		total[d.Backend]++
		if !d.Usable() {
			continue
		}
		byBackend[d.Backend] = append(byBackend[d.Backend], d)
		if d.ID == chosen {
			first = &rep.Devices[i]
		}
	}
	one := strings.Contains(cfg.Device.Preferred, ":") // an explicit device id
	var out []group
	if first != nil {
		b := first.Backend
		members := byBackend[b]
		switch {
		case one:
			members = []probe.Device{*first}
		case o.Devices > len(members):
			return nil, cmdutil.Usagef("invalid --devices %d: this machine has %d usable %s device(s) (%s)", o.Devices, len(members), b, ids(members))
		case b == backend.XLA && o.Devices > 1 && o.Devices < len(members):
			return nil, cmdutil.Usagef("invalid --devices %d: devctl narrows a TPU host to one chip (TPU_VISIBLE_CHIPS, as recommend does) or keeps all %d", o.Devices, len(members))
		case o.Devices > 0:
			members = members[:o.Devices]
		}
		out = append(out, group{backend: b, members: members, all: len(members) == total[b]})
		if one {
			for _, d := range byBackend[b] {
				if d.ID != first.ID {
					out = append(out, group{backend: b, members: []probe.Device{d}, all: total[b] == 1})
				}
			}
		}
	} else if o.Devices > 0 {
		return nil, cmdutil.Usagef("invalid --devices %d: no usable accelerator was chosen on this machine", o.Devices)
	}
	for _, b := range priority {
		if first != nil && b == first.Backend {
			continue
		}
		if ds := byBackend[b]; len(ds) > 0 {
			out = append(out, group{backend: b, members: ds, all: len(ds) == total[b]})
		}
	}
	return out, nil
}

func ids(ds []probe.Device) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.ID
	}
	return strings.Join(s, ", ")
}

// candidates turns the groups into the ladder's devices, each with the
// environment recommend gives for it (for the first, with --model,
// recommend's whole plan), the visibility variable widened to the group;
// the CPU is last.
func (o *Options) candidates(ctx context.Context, rep *probe.Report, cfg *config.Config) ([]supervise.Candidate, error) {
	strategy, frac := cfg.Device.MemoryStrategy, cfg.Device.MemoryFraction
	if f, ok := strategy.Fraction(); ok {
		frac = f
	}
	gs, err := o.groups(rep, cfg)
	if err != nil {
		return nil, err
	}
	var out []supervise.Candidate
	hasCPU := false
	for i, g := range gs {
		t := targetFor(rep, g.members[0])
		n := len(g.members)
		env := recommend.Env(t, strategy, frac, oomsim.Plan{}, n)
		if i == 0 && o.model().Given() > 0 {
			res, err := o.plan(ctx, rep, g.members[0].ID, n, cfg)
			if err != nil {
				return nil, err
			}
			env = res.Env
			o.planned = res
		}
		c := candidate(g.id(), t, widen(env, g))
		out = append(out, c)
		hasCPU = hasCPU || g.backend == backend.CPU
	}
	if !hasCPU {
		t := recommend.Target{Name: "cpu", Backend: backend.CPU, Count: 1}
		out = append(out, candidate("cpu", t, recommend.Env(t, strategy, frac, oomsim.Plan{}, 1)))
	}
	return out, nil
}

// widen sets the group's visibility variable to its members, or leaves it
// out when the group is every device of the backend: nothing is narrowed,
// and a scheduler's own list (inherited) still applies.
func widen(env []envvar.Var, g group) []envvar.Var {
	name, ok := visibilityVar[g.backend]
	if !ok {
		return env
	}
	var out []envvar.Var
	for _, e := range env {
		if e.Name != name {
			out = append(out, e)
			continue
		}
		if g.all && len(g.members) > 1 {
			continue // every device of the backend: nothing to narrow
		}
		idx := make([]int, len(g.members))
		for i, d := range g.members {
			idx[i] = d.Index
		}
		sort.Ints(idx)
		parts := make([]string, len(idx))
		for i, n := range idx {
			parts[i] = strconv.Itoa(n)
		}
		v := strings.Join(parts, ",")
		if g.backend == backend.XPU {
			v = "level_zero:" + v
		}
		e.Value = v
		out = append(out, e)
	}
	return out
}
