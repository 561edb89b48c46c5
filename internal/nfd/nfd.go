// Package nfd turns a capability report into Kubernetes node labels, in
// the local feature file format of node-feature-discovery (NFD): one
// `namespace/name=value` per line, `#` comments, an optional
// `# +expiry-time=RFC3339` directive, at most 64 kB, written by creating a
// dot-file (which nfd-worker ignores) and renaming it into place.
//
// NVIDIA GPUs get GPU Feature Discovery's label names (nvidia.com/gpu.product,
// nvidia.com/gpu.count, nvidia.com/cuda.driver.major, ...), so node
// selectors written for GFD keep working; every other fact goes under one
// namespace, devctl.io/.
package nfd

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/probe"
)

// Namespace is the label prefix of every non-NVIDIA label.
const Namespace = "devctl.io/"

// MaxSize is NFD's limit: a larger feature file is ignored whole.
const MaxSize = 64 * 1024

// DefaultPath is where nfd-worker reads local feature files.
const DefaultPath = "/etc/kubernetes/node-feature-discovery/features.d/devctl"

// Label is one node label.
type Label struct {
	Key   string
	Value string
}

// Labels derives the node labels from a report, sorted by key. Values are
// made valid Kubernetes label values (at most 63 characters of
// [A-Za-z0-9._-], alphanumeric at both ends); a fact with no valid value
// is left out, never invented.
func Labels(rep *probe.Report) []Label {
	m := map[string]string{}
	set := func(key, value string) {
		if v, ok := labelValue(value); ok {
			m[key] = v
		}
	}
	setInt := func(key string, v int64) { set(key, strconv.FormatInt(v, 10)) }

	byBackend := map[backend.Backend][]probe.Device{}
	for _, d := range rep.Devices {
		byBackend[d.Backend] = append(byBackend[d.Backend], d)
	}
	set(Namespace+"backend", string(rep.Summary.Backend))
	for name, on := range map[string]bool{"fp16": rep.Summary.SupportsFP16, "bf16": rep.Summary.SupportsBF16, "8bit": rep.Summary.Supports8Bit} {
		set(Namespace+"supports."+name, strconv.FormatBool(on))
	}
	for _, dr := range rep.Drivers {
		if dr.Status == probe.StatusDegraded {
			set(Namespace+"degraded", "true")
			set(Namespace+"degraded."+dr.Name, "true")
		}
	}

	if gpus := byBackend[backend.CUDA]; len(gpus) > 0 {
		nvidia(set, setInt, rep, gpus)
	}
	for _, b := range backend.All() {
		devs := byBackend[b]
		if b == backend.CUDA || b == backend.CPU || len(devs) == 0 {
			continue
		}
		p := Namespace + string(b) + "."
		first := devs[0]
		setInt(p+"count", int64(len(devs)))
		set(p+"product", first.Name)
		if first.TotalMemoryMB != nil {
			setInt(p+"memory", *first.TotalMemoryMB)
		}
		if first.Architecture != nil {
			set(p+"architecture", *first.Architecture)
		}
		switch b {
		case backend.ROCm:
			if first.Architecture != nil {
				set(p+"gfx-target", *first.Architecture)
			}
			set(p+"compute-partition", first.ExtraString(probe.ExtraComputePartition))
		case backend.XLA:
			set(Namespace+"tpu.generation", first.ExtraString(probe.ExtraGeneration))
			set(Namespace+"tpu.accelerator-type", first.ExtraString(probe.ExtraAcceleratorType))
			setInt(Namespace+"tpu.chips", int64(len(devs)))
		case backend.Neuron:
			set(p+"generation", first.ExtraString(probe.ExtraGeneration))
			cores := int64(0)
			for _, d := range devs {
				if n, ok := d.ExtraInt(probe.ExtraNeuronCores); ok {
					cores += n
				}
			}
			if cores > 0 {
				setInt(p+"cores", cores)
			}
		}
	}
	if cpus := byBackend[backend.CPU]; len(cpus) > 0 {
		c := cpus[0]
		set(Namespace+"cpu.fp16", strconv.FormatBool(c.SupportsFP16))
		set(Namespace+"cpu.bf16", strconv.FormatBool(c.SupportsBF16))
		set(Namespace+"cpu.8bit", strconv.FormatBool(c.Supports8Bit))
		feats := map[string]bool{}
		for _, f := range c.Features {
			feats[f] = true
		}
		set(Namespace+"cpu.amx", strconv.FormatBool(feats["amx_tile"]))
		set(Namespace+"cpu.avx512", strconv.FormatBool(feats["avx512f"]))
		if c.Cores != nil {
			setInt(Namespace+"cpu.cores", int64(*c.Cores))
		}
	}

	out := make([]Label, 0, len(m))
	for k, v := range m {
		out = append(out, Label{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// nvidia sets GPU Feature Discovery's labels from the first CUDA device
// (GFD, too, describes a node by one GPU model) and the driver.
func nvidia(set func(k, v string), setInt func(k string, v int64), rep *probe.Report, gpus []probe.Device) {
	first := gpus[0]
	set("nvidia.com/gpu.present", "true")
	set("nvidia.com/gpu.product", strings.ReplaceAll(first.Name, " ", "-"))
	setInt("nvidia.com/gpu.count", int64(len(gpus)))
	if first.TotalMemoryMB != nil {
		setInt("nvidia.com/gpu.memory", *first.TotalMemoryMB)
	}
	if cc := first.ComputeCapability; cc != nil {
		major, minor, ok := strings.Cut(*cc, ".")
		if ok {
			set("nvidia.com/gpu.compute.major", major)
			set("nvidia.com/gpu.compute.minor", minor)
			if n, err := strconv.Atoi(major); err == nil {
				set("nvidia.com/gpu.family", family(n, minor))
			}
		}
	}
	if v := rep.Summary.DriverVersion; v != nil {
		parts := strings.Split(*v, ".")
		for i, name := range []string{"major", "minor", "rev"} {
			if i < len(parts) {
				set("nvidia.com/cuda.driver."+name, parts[i])
			}
		}
		for i, name := range []string{"major", "minor", "revision"} {
			if i < len(parts) {
				set("nvidia.com/cuda.driver-version."+name, parts[i])
			}
		}
		set("nvidia.com/cuda.driver-version.full", *v)
	}
	if v := rep.Summary.CUDAVersion; v != nil {
		parts := strings.Split(*v, ".")
		for i, name := range []string{"major", "minor"} {
			if i < len(parts) {
				set("nvidia.com/cuda.runtime."+name, parts[i])
				set("nvidia.com/cuda.runtime-version."+name, parts[i])
			}
		}
		set("nvidia.com/cuda.runtime-version.full", *v)
	}
	mig := false
	for _, d := range gpus {
		if s := d.ExtraString(probe.ExtraMIGModeCurrent); s != "" && s != "not_supported" && s != "unsupported" {
			mig = true
		}
	}
	set("nvidia.com/mig.capable", strconv.FormatBool(mig))
}

// family names a compute capability's architecture as GFD does (7.5 and
// up within 7 is Turing), with the architectures GFD's older table lacks.
func family(major int, minor string) string {
	switch major {
	case 1:
		return "tesla"
	case 2:
		return "fermi"
	case 3:
		return "kepler"
	case 5:
		return "maxwell"
	case 6:
		return "pascal"
	case 7:
		if m, err := strconv.Atoi(minor); err == nil && m >= 5 {
			return "turing"
		}
		return "volta"
	case 8:
		if minor == "9" {
			return "ada-lovelace"
		}
		return "ampere"
	case 9:
		return "hopper"
	case 10, 12:
		return "blackwell"
	}
	return "undefined"
}

// labelValue makes s a valid label value: characters outside
// [A-Za-z0-9._-] become '-', at most 63 characters, alphanumeric at both
// ends. An empty result is not a value.
func labelValue(s string) (string, bool) {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	if len(b) > 63 {
		b = b[:63]
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	for len(b) > 0 && !alnum(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && !alnum(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return string(b), len(b) > 0
}

// Render writes the feature file: a comment naming its writer, the expiry
// directive (when expiry is not zero) and one label per line. It fails
// rather than write a file NFD would ignore for its size.
func Render(labels []Label, version string, expiry time.Time) ([]byte, error) {
	var b bytes.Buffer
	version = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, version)
	fmt.Fprintf(&b, "# node labels from devctl %s (devctl probe -o nfd); rewritten, do not edit\n", version)
	if !expiry.IsZero() {
		fmt.Fprintf(&b, "# +expiry-time=%s\n", expiry.UTC().Format(time.RFC3339))
	}
	for _, l := range labels {
		fmt.Fprintf(&b, "%s=%s\n", l.Key, l.Value)
	}
	if b.Len() >= MaxSize {
		return nil, fmt.Errorf("the feature file would be %d bytes; NFD ignores files of %d bytes or more", b.Len(), MaxSize)
	}
	return b.Bytes(), nil
}
