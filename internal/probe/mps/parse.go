package mps

import (
	"encoding/json"
	"strconv"
	"strings"
)

// IoregGPU is what `ioreg -rc AGXAccelerator` says about the Apple GPU.
type IoregGPU struct {
	Model string
	Cores int
}

// ParseIoreg reads "model" and "gpu-core-count" from `ioreg -rc
// AGXAccelerator` output. The entry looks like
//
//	+-o AGXAcceleratorG16G  <class AGXAcceleratorG16G, ...>
//	    {
//	      "PerformanceStatistics" = {...}
//	      "model" = "Apple M4"
//	      "gpu-core-count" = 10
//	    }
//
// Only top-level `"key" = value` lines count, so keys inside the
// PerformanceStatistics dictionary are never mistaken for them. It returns
// false when no core count is present (an Intel Mac has no AGXAccelerator).
func ParseIoreg(b []byte) (IoregGPU, bool) {
	var g IoregGPU
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimLeft(line, " \t|")
		k, v, ok := strings.Cut(line, " = ")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case `"gpu-core-count"`:
			if found {
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err == nil && n > 0 && n < 1<<16 {
				g.Cores, found = n, true
			}
		case `"model"`:
			if g.Model == "" {
				g.Model = strings.Trim(strings.TrimSpace(v), `"`)
			}
		}
	}
	return g, found
}

// Display is one GPU from `system_profiler SPDisplaysDataType -json`.
type Display struct {
	Model    string
	Vendor   string
	Cores    int
	VRAMMiB  int64
	IsAMD    bool
	IsApple  bool
	MetalSup string
}

// ParseDisplays reads `system_profiler SPDisplaysDataType -json`. Vendors
// appear as "sppci_vendor_AMD", "AMD (0x1002)", "sppci_vendor_Apple" or
// "Apple (0x106b)" depending on the macOS release; VRAM as "8 GB" or
// "1536 MB". Entries that are not objects are skipped.
func ParseDisplays(b []byte) ([]Display, error) {
	var doc struct {
		SP []json.RawMessage `json:"SPDisplaysDataType"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	var out []Display
	for _, raw := range doc.SP {
		var e map[string]any
		if json.Unmarshal(raw, &e) != nil || e == nil {
			continue
		}
		str := func(k string) string { s, _ := e[k].(string); return s }
		d := Display{Model: str("sppci_model"), Vendor: str("spdisplays_vendor"), MetalSup: str("spdisplays_mtlgpufamilysupport")}
		if d.Model == "" {
			d.Model = str("_name")
		}
		v := strings.ToLower(d.Vendor + " " + str("spdisplays_vendor-id") + " " + str("spdisplays_vendor_id"))
		d.IsAMD = strings.Contains(v, "amd") || strings.Contains(v, "0x1002") || strings.Contains(v, "ati")
		d.IsApple = strings.Contains(v, "apple") || strings.Contains(v, "0x106b")
		if n, err := strconv.Atoi(str("sppci_cores")); err == nil && n > 0 {
			d.Cores = n
		}
		d.VRAMMiB = ParseSize(str("spdisplays_vram"))
		out = append(out, d)
	}
	return out, nil
}

// ParseSize reads "8 GB" or "1536 MB" as MiB (macOS means binary units);
// 0 when unreadable.
func ParseSize(s string) int64 {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || n <= 0 || n > 1<<30 {
		return 0
	}
	switch strings.ToUpper(f[1]) {
	case "GB":
		return n * 1024
	case "MB":
		return n
	case "TB":
		return n * 1024 * 1024
	}
	return 0
}

// ParseUint reads a sysctl number; false when it is not one.
func ParseUint(s string) (uint64, bool) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	return v, err == nil
}

// WorkingSetEstimate is devctl's guess at Metal's
// recommendedMaxWorkingSetSize when iogpu.wired_limit_mb is not set:
// about two thirds of RAM up to 36 GiB, three quarters above. Published
// measurements range from 67% (16 GB) to 84% (128 GiB), so this errs low.
func WorkingSetEstimate(memBytes uint64) uint64 {
	if memBytes <= 36<<30 {
		return memBytes / 100 * 67
	}
	return memBytes / 4 * 3
}
