// Package drivers lists every probe driver devctl ships, in one place.
package drivers

import (
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/cpu"
	"github.com/devctl/devctl/internal/probe/memory"
	"github.com/devctl/devctl/internal/probe/mps"
	"github.com/devctl/devctl/internal/probe/neuron"
	"github.com/devctl/devctl/internal/probe/nvidia"
	"github.com/devctl/devctl/internal/probe/rocm"
	"github.com/devctl/devctl/internal/probe/software"
	"github.com/devctl/devctl/internal/probe/system"
	"github.com/devctl/devctl/internal/probe/tpu"
	"github.com/devctl/devctl/internal/probe/xpu"
)

// All returns every driver. The system driver (kernel, container) is first
// and always runs; the others can be limited with --only.
func All() []probe.Driver {
	return []probe.Driver{
		system.New(),
		cpu.New(),
		memory.New(),
		nvidia.New(),
		rocm.New(),
		xpu.New(),
		tpu.New(),
		neuron.New(),
		mps.New(),
		software.New(),
	}
}

// Names lists the drivers --only accepts.
func Names() []string {
	var names []string
	for _, d := range All()[1:] {
		names = append(names, d.Name())
	}
	return names
}

// Select returns the system driver plus the named ones (all when only is
// empty). An unknown name is a usage error naming the accepted ones.
func Select(only []string) ([]probe.Driver, error) {
	all := All()
	if len(only) == 0 {
		return all, nil
	}
	byName := map[string]probe.Driver{}
	for _, d := range all[1:] {
		byName[d.Name()] = d
	}
	out := []probe.Driver{all[0]}
	seen := map[string]bool{}
	for _, n := range only {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" || seen[n] {
			continue
		}
		d, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("unknown driver %q in --only: want any of %s", n, strings.Join(Names(), ", "))
		}
		seen[n] = true
		out = append(out, d)
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("empty --only: want any of %s", strings.Join(Names(), ", "))
	}
	return out, nil
}
