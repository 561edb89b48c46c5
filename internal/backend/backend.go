// Package backend names the compute backends devctl knows. It is the one
// place that lists them, ranks them, and reads the names users type
// (aliases included), so config, the probe's device selection, history and
// the help texts cannot drift apart.
package backend

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Backend is a framework-facing device family: the prefix of device ids
// ("cuda:0") and the value of the report's "backend" fields.
type Backend string

// The backends, named as PyTorch/JAX users know them.
const (
	CUDA   Backend = "cuda"
	ROCm   Backend = "rocm"
	XLA    Backend = "xla"
	Neuron Backend = "neuron"
	XPU    Backend = "xpu"
	MPS    Backend = "mps"
	CPU    Backend = "cpu"
)

// Auto is the device preference that lets devctl choose.
const Auto = "auto"

// all is every backend in rank order: dedicated accelerators first, the
// CPU last. It is the default platform priority and the report's order.
var all = [...]Backend{CUDA, ROCm, XLA, Neuron, XPU, MPS, CPU}

// aliases maps other names users type onto a backend: PyTorch/XLA and
// Google's docs say "tpu" for what devctl reports as the xla backend.
var aliases = map[string]Backend{"tpu": XLA}

// All returns every backend in rank order. The caller may modify the slice.
func All() []Backend { return append([]Backend(nil), all[:]...) }

// Rank orders backends in reports: lower is listed first. An unknown
// backend sorts after all known ones.
func (b Backend) Rank() int {
	for i, x := range all {
		if x == b {
			return i
		}
	}
	return len(all)
}

// Known reports whether b is one of the listed backends.
func (b Backend) Known() bool { return b.Rank() < len(all) }

// String returns the backend's name.
func (b Backend) String() string { return string(b) }

// Names lists the backends for messages: "cuda, rocm, xla, ...".
func Names() string { return join(all[:]) }

// Help lists the backends with their aliases for help texts:
// "cuda, rocm, xla (alias tpu), neuron, xpu, mps, cpu".
func Help() string {
	parts := make([]string, len(all))
	for i, b := range all {
		parts[i] = string(b)
		for a, to := range aliases {
			if to == b {
				parts[i] += " (alias " + a + ")"
			}
		}
	}
	return strings.Join(parts, ", ")
}

func join(bs []Backend) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

// Canonical lower-cases a name and resolves aliases ("TPU" -> "xla"). A
// name that is no backend is returned lower-cased, so callers that keep
// free-form device words ("gpu", "any") can still use it.
func Canonical(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if b, ok := aliases[s]; ok {
		return string(b)
	}
	return s
}

// Parse reads a backend name, case-insensitively, aliases included.
func Parse(s string) (Backend, error) {
	b := Backend(Canonical(s))
	if !b.Known() {
		return "", fmt.Errorf("want one of %s", Help())
	}
	return b, nil
}

// ParseList reads backend names separated by commas or spaces, from one or
// several strings (a YAML list, a flag value), in order.
func ParseList(items ...string) ([]Backend, error) {
	var out []Backend
	sep := func(r rune) bool { return r == ',' || unicode.IsSpace(r) }
	for _, item := range items {
		for _, part := range strings.FieldsFunc(item, sep) {
			b, err := Parse(part)
			if err != nil {
				return nil, &EntryError{Entry: Canonical(part), Err: err}
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// EntryError names the entry of a list that is no backend.
type EntryError struct {
	Entry string
	Err   error
}

func (e *EntryError) Error() string { return fmt.Sprintf("entry %q: %v", e.Entry, e.Err) }
func (e *EntryError) Unwrap() error { return e.Err }

// maxIndex bounds a device index in an id: no machine has 65536 devices,
// and a huge number is a typo.
const maxIndex = 1 << 16

// ParsePreference reads what a user asks for as the default device:
// "auto", a backend ("cuda", "tpu") or a device id ("cuda:1", "tpu:0";
// the CPU has no index). It returns the canonical form ("xla:0").
func ParsePreference(s string) (string, error) {
	c := Canonical(s)
	if c == Auto {
		return c, nil
	}
	name, idx, hasIdx := strings.Cut(c, ":")
	b := Backend(Canonical(name))
	if b.Known() && !hasIdx {
		return string(b), nil
	}
	if b.Known() && b != CPU {
		if n, err := strconv.Atoi(idx); err == nil && n >= 0 && n < maxIndex {
			return string(b) + ":" + strconv.Itoa(n), nil
		}
	}
	return "", fmt.Errorf("want one of %s, %s, or a device id such as cuda:0", Auto, Help())
}

// Of returns the backend part of a device id or preference: "cuda:1" ->
// cuda, "tpu" -> xla. Unknown words come back lower-cased as they are.
func Of(id string) Backend {
	name, _, _ := strings.Cut(Canonical(id), ":")
	return Backend(Canonical(name))
}
