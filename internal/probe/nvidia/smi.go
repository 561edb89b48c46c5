package nvidia

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// QueryFields are the nvidia-smi --query-gpu fields the fallback asks for,
// in order. compute_cap exists from R510 on; older nvidia-smi rejects it and
// the driver retries with QueryFieldsLegacy.
var QueryFields = []string{
	"index", "name", "uuid", "pci.bus_id", "memory.total", "memory.used", "memory.free",
	"driver_version", "compute_cap", "pcie.link.gen.current", "pcie.link.gen.max",
	"pcie.link.width.current", "pcie.link.width.max",
}

// QueryFieldsLegacy is QueryFields without compute_cap.
var QueryFieldsLegacy = withoutField(QueryFields, "compute_cap")

func withoutField(fields []string, drop string) []string {
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		if f != drop {
			out = append(out, f)
		}
	}
	return out
}

// QueryArgs are the nvidia-smi arguments for a field list.
func QueryArgs(fields []string) []string {
	return []string{"--query-gpu=" + strings.Join(fields, ","), "--format=csv,noheader,nounits"}
}

// smiPlaceholders maps nvidia-smi's bracketed non-values to the NVML return
// code behind them, so the fallback records "not supported" like NVML does.
var smiPlaceholders = map[string]Return{
	"[n/a]":                      ErrNotSupported,
	"n/a":                        ErrNotSupported,
	"[not supported]":            ErrNotSupported,
	"[unknown error]":            ErrUnknown,
	"[insufficient permissions]": ErrNoPermission,
	"[no permission]":            ErrNoPermission,
	"[gpu is lost]":              ErrGPUIsLost,
	"[gpu requires reset]":       ErrResetRequired,
	"[requires reset]":           ErrResetRequired,
}

// placeholder returns the return code for a bracketed value, and whether
// the value was one.
func placeholder(v string) (Return, bool) {
	l := strings.ToLower(v)
	if code, ok := smiPlaceholders[l]; ok {
		return code, true
	}
	if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
		return ErrUnknown, true
	}
	return 0, false
}

// SMIQuery is the parsed --query-gpu output.
type SMIQuery struct {
	GPUs          []GPU
	DriverVersion *Answer[string]
}

// ParseQueryGPU parses `nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits`
// output into NVML-style answers. Values such as "[N/A]" or "[Not
// Supported]" become failed answers with the matching return code; a
// malformed line is an error naming its number.
func ParseQueryGPU(b []byte, fields []string) (SMIQuery, error) {
	var q SMIQuery
	col := map[string]int{}
	for i, f := range fields {
		col[f] = i
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		vals := strings.Split(line, ",")
		if len(vals) > len(fields) {
			// A comma inside the product name: fold the extra columns back.
			nameCol, ok := col["name"]
			if !ok {
				return SMIQuery{}, fmt.Errorf("nvidia-smi line %d: %d values for %d fields", n, len(vals), len(fields))
			}
			extra := len(vals) - len(fields)
			merged := strings.Join(vals[nameCol:nameCol+extra+1], ",")
			vals = append(append(append([]string{}, vals[:nameCol]...), merged), vals[nameCol+extra+1:]...)
		}
		if len(vals) != len(fields) {
			return SMIQuery{}, fmt.Errorf("nvidia-smi line %d: %d values for %d fields (%q)", n, len(vals), len(fields), truncate(line, 80))
		}
		for i := range vals {
			vals[i] = strings.TrimSpace(vals[i])
		}
		g, drv, err := smiRow(vals, col, len(q.GPUs))
		if err != nil {
			return SMIQuery{}, fmt.Errorf("nvidia-smi line %d: %w", n, err)
		}
		if q.DriverVersion == nil || (!q.DriverVersion.OK() && drv.OK()) {
			q.DriverVersion = drv
		}
		if len(q.GPUs) == maxGPUs {
			return SMIQuery{}, fmt.Errorf("nvidia-smi line %d: more than %d GPUs", n, maxGPUs)
		}
		q.GPUs = append(q.GPUs, g)
	}
	if err := sc.Err(); err != nil {
		return SMIQuery{}, fmt.Errorf("reading nvidia-smi output: %w", err)
	}
	return q, nil
}

func smiRow(vals []string, col map[string]int, ordinal int) (GPU, *Answer[string], error) {
	g := GPU{Index: ordinal}
	get := func(field string) (string, bool) {
		i, ok := col[field]
		if !ok {
			return "", false
		}
		return vals[i], true
	}
	str := func(field string) *Answer[string] {
		v, ok := get(field)
		if !ok {
			return nil
		}
		if code, ph := placeholder(v); ph {
			if code == ErrGPUIsLost {
				g.Lost = true
			}
			return Fail[string](code)
		}
		if v == "" {
			return Fail[string](ErrNotSupported)
		}
		return Ok(v)
	}
	var firstErr error
	num := func(field string) *Answer[int] {
		a := str(field)
		if a == nil || !a.OK() {
			if a == nil {
				return nil
			}
			return Fail[int](a.Ret)
		}
		v, err := strconv.Atoi(stripUnit(a.Value))
		if err != nil || v < 0 {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s: %q is not a whole number", field, a.Value)
			}
			return Fail[int](ErrUnknown)
		}
		return Ok(v)
	}

	if idx := num("index"); idx.OK() {
		g.Index = idx.Value
	}
	g.Name = str("name")
	g.UUID = str("uuid")
	if bus := str("pci.bus_id"); bus != nil {
		if bus.OK() {
			g.PCI = Ok(PCIInfo{BusID: bus.Value})
		} else {
			g.PCI = Fail[PCIInfo](bus.Ret)
		}
	}
	mem := func(field string) *Answer[int] {
		a := num(field)
		if a.OK() && a.Value > maxMemoryMiB {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s: %d MiB is more than any GPU has (at most %d)", field, a.Value, maxMemoryMiB)
			}
			return Fail[int](ErrUnknown)
		}
		return a
	}
	total, used, free := mem("memory.total"), mem("memory.used"), mem("memory.free")
	if total.OK() {
		m := Memory{Total: mib(total.Value)}
		if used.OK() {
			m.Used = mib(used.Value)
		}
		if free.OK() {
			m.Free = mib(free.Value)
		}
		g.Memory = Ok(m)
	} else if total != nil {
		g.Memory = Fail[Memory](total.Ret)
	}
	if cc := str("compute_cap"); cc != nil {
		if cc.OK() {
			ma, mi, ok := parseCC(cc.Value)
			if !ok {
				if firstErr == nil {
					firstErr = fmt.Errorf("compute_cap: %q is not major.minor", cc.Value)
				}
				g.ComputeCapability = Fail[ComputeCapability](ErrUnknown)
			} else {
				g.ComputeCapability = Ok(ComputeCapability{Major: ma, Minor: mi})
			}
		} else {
			g.ComputeCapability = Fail[ComputeCapability](cc.Ret)
		}
	}
	g.PCIeGenCurrent = num("pcie.link.gen.current")
	g.PCIeGenMax = num("pcie.link.gen.max")
	g.PCIeWidthCurrent = num("pcie.link.width.current")
	g.PCIeWidthMax = num("pcie.link.width.max")
	drv := str("driver_version")
	if firstErr != nil {
		return GPU{}, nil, firstErr
	}
	return g, drv, nil
}

// maxGPUs bounds the GPUs one nvidia-smi may list (NVML's own limit per
// host is far lower): a broken or hostile program must not make devctl
// build and print a report of tens of thousands of devices.
const maxGPUs = 1024

// maxMemoryMiB (1 PiB) bounds a memory figure: far above any GPU, and low
// enough that byte counts stay inside int64 wherever they are used.
const maxMemoryMiB = 1 << 30

func mib(v int) uint64 { return uint64(v) << 20 }

// stripUnit drops a unit a user's nvidia-smi printed despite nounits
// ("81920 MiB").
func stripUnit(v string) string {
	if i := strings.IndexByte(v, ' '); i > 0 {
		return v[:i]
	}
	return v
}

func parseCC(s string) (int, int, bool) {
	maj, min, ok := strings.Cut(s, ".")
	if !ok {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if err1 != nil || err2 != nil || a < 0 || b < 0 || a > 99 || b > 99 {
		return 0, 0, false
	}
	return a, b, true
}

// ParseCUDAVersion finds the CUDA version in `nvidia-smi -q` output
// ("CUDA Version : 12.4") or in the banner of plain `nvidia-smi`
// ("... CUDA Version: 12.4 |"). It returns NVML's integer form (12040) and
// false when the line is missing (drivers before R410) or says N/A.
func ParseCUDAVersion(b []byte) (int, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.Index(line, "CUDA Version")
		if i < 0 {
			continue
		}
		rest := strings.TrimLeft(line[i+len("CUDA Version"):], " \t")
		if !strings.HasPrefix(rest, ":") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t")
		if j := strings.IndexAny(rest, " \t|"); j >= 0 {
			rest = rest[:j]
		}
		maj, min, ok := parseCC(rest)
		if !ok {
			return 0, false
		}
		return maj*1000 + min*10, true
	}
	return 0, false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
