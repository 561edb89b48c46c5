package explain

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// sizeRE matches a size the way PyTorch, XLA and TensorFlow print one:
// "20.00 MiB", "0 bytes", "17.11 GB", "6.48G", "4.0K".
const sizeRE = `([0-9]+(?:\.[0-9]+)?\s?(?:[KMGTP]i?B|bytes|B|[KMGTP])?)`

// parseSize reads one size. Every unit is binary: PyTorch's MPS allocator
// prints "GB" for GiB and XLA prints "G" for GiB, so reading them as
// decimal would be wrong for the logs this package reads. A bare number
// is bytes.
func parseSize(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, false
	}
	unit := strings.TrimSpace(s[i:])
	var mul float64
	switch unit {
	case "", "B", "bytes", "byte":
		mul = 1
	case "K", "KB", "KiB":
		mul = 1 << 10
	case "M", "MB", "MiB":
		mul = 1 << 20
	case "G", "GB", "GiB":
		mul = 1 << 30
	case "T", "TB", "TiB":
		mul = 1 << 40
	case "P", "PB", "PiB":
		mul = 1 << 50
	default:
		return 0, false
	}
	b := v * mul
	if b >= math.MaxInt64 {
		return 0, false
	}
	return int64(math.Round(b)), true
}

// cudaVersionFromInt turns the driver API's integer (11040, 10010, 6050)
// into "11.4", "10.1", "6.5".
func cudaVersionFromInt(s string) (string, bool) {
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 || v > 1000000 {
		return "", false
	}
	return strconv.Itoa(v/1000) + "." + strconv.Itoa((v%1000)/10), true
}

// extractor reads some Numbers from text. global extractors are also
// applied to the last line of the whole log holding needle (versions
// printed by nvidia-smi or collect_env far from the error).
type extractor struct {
	re     string
	global string
	apply  func(n *Numbers, sub []string)
}

func setSize(p **int64, s string) {
	if *p != nil {
		return
	}
	if v, ok := parseSize(s); ok {
		*p = &v
	}
}

func setInt(p **int, s string) {
	if *p != nil {
		return
	}
	if v, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		*p = &v
	}
}

func setStr(p **string, s string) {
	if *p != nil || s == "" {
		return
	}
	*p = &s
}

// extractors is the table of number readers; each fills only fields still
// nil, so the first (closest to the primary line) value wins.
var extractors = []extractor{
	// PyTorch ≥ 2.1: "Tried to allocate 20.00 MiB. GPU 0 has a total capacity of
	// 14.75 GiB of which 3.06 MiB is free." (also "capacty", and HIP).
	{re: `Tried to allocate ` + sizeRE + `\. GPU (\d+) has a total capac(?:i)?ty of ` + sizeRE + ` of which ` + sizeRE + ` is free`,
		apply: func(n *Numbers, s []string) {
			setSize(&n.RequestedBytes, s[1])
			setInt(&n.DeviceIndex, s[2])
			setSize(&n.TotalBytes, s[3])
			setSize(&n.FreeBytes, s[4])
		}},
	// "Of the allocated memory 2.93 GiB is allocated by PyTorch, and 2.30 GiB is
	// reserved by PyTorch but unallocated." Reserved is reported as the
	// allocator's total (allocated + cached), like the older message.
	{re: `Of the allocated memory ` + sizeRE + ` is allocated by PyTorch, and ` + sizeRE + ` is reserved by PyTorch but unallocated`,
		apply: func(n *Numbers, s []string) {
			a, ok1 := parseSize(s[1])
			r, ok2 := parseSize(s[2])
			if ok1 && n.AllocatedBytes == nil {
				n.AllocatedBytes = &a
			}
			if ok1 && ok2 && n.ReservedBytes == nil {
				t := a + r
				n.ReservedBytes = &t
			}
		}},
	// PyTorch < 2.1: "Tried to allocate 1.71 GiB (GPU 0; 6.00 GiB total capacity;
	// 3.49 GiB already allocated; 1.04 GiB free; 3.50 GiB reserved in total by PyTorch)"
	// and the older "...; 787.74 MiB cached)".
	{re: `Tried to allocate ` + sizeRE + ` \(GPU (\d+); ` + sizeRE + ` total capacity; ` + sizeRE + ` already allocated; ` + sizeRE + ` free;(?: ` + sizeRE + ` (?:reserved in total by PyTorch|cached))?`,
		apply: func(n *Numbers, s []string) {
			setSize(&n.RequestedBytes, s[1])
			setInt(&n.DeviceIndex, s[2])
			setSize(&n.TotalBytes, s[3])
			setSize(&n.AllocatedBytes, s[4])
			setSize(&n.FreeBytes, s[5])
			if s[6] != "" {
				setSize(&n.ReservedBytes, s[6])
			}
		}},
	// A bare "Tried to allocate 192.00 MiB" (titles, truncated messages).
	{re: `Tried to allocate ` + sizeRE,
		apply: func(n *Numbers, s []string) { setSize(&n.RequestedBytes, s[1]) }},
	// MPS: "MPS backend out of memory (MPS allocated: 7.43 GB, other
	// allocations: 24.46 GB, max allowed: 32.00 GB). Tried to allocate 129.21 MB".
	{re: `MPS allocated: ` + sizeRE + `, other allocations: ` + sizeRE + `, max allowed: ` + sizeRE,
		apply: func(n *Numbers, s []string) {
			setSize(&n.AllocatedBytes, s[1])
			setSize(&n.OtherBytes, s[2])
			setSize(&n.TotalBytes, s[3])
		}},
	// XLA: "Out of memory while trying to allocate 7406166528 bytes."
	{re: `Out of memory while trying to allocate (\d+) bytes`,
		apply: func(n *Numbers, s []string) { setSize(&n.RequestedBytes, s[1]) }},
	// XLA/TPU: "Attempting to reserve 6.48G at the bottom of memory. That was not
	// possible. There are 6.78G free, 0B reserved, and 3.33G reservable."
	{re: `Attempting to reserve ` + sizeRE + ` at the bottom of memory\. That was not possible\. There are ` + sizeRE + ` free`,
		apply: func(n *Numbers, s []string) {
			setSize(&n.RequestedBytes, s[1])
			setSize(&n.FreeBytes, s[2])
		}},
	// XLA/TPU: "Ran out of memory in memory space hbm. Used 29.80G of 7.98G hbm."
	{re: `Used ` + sizeRE + ` of ` + sizeRE + ` hbm`,
		apply: func(n *Numbers, s []string) {
			setSize(&n.RequestedBytes, s[1])
			setSize(&n.TotalBytes, s[2])
		}},
	{re: `HBM capacity ` + sizeRE,
		apply: func(n *Numbers, s []string) { setSize(&n.TotalBytes, s[1]) }},
	// TensorFlow / XLA stream executor: "failed to alloc 2740606464 bytes" and
	// "failed to allocate 890.06M (933298432 bytes)".
	{re: `failed to alloc(?:ate)? (?:` + sizeRE + ` \()?(\d+) bytes`,
		apply: func(n *Numbers, s []string) { setSize(&n.RequestedBytes, s[2]) }},
	// TensorFlow BFC allocator stats: "Limit: 10625279591" / "InUse: 7350513920".
	{re: `Limit:\s+(\d+)`, apply: func(n *Numbers, s []string) { setSize(&n.TotalBytes, s[1]) }},
	{re: `InUse:\s+(\d+)`, apply: func(n *Numbers, s []string) { setSize(&n.AllocatedBytes, s[1]) }},

	// Versions. "The NVIDIA driver on your system is too old (found version 11040)"
	// reports the CUDA version the driver supports, as an integer.
	{re: `found version (\d+)`,
		apply: func(n *Numbers, s []string) {
			if v, ok := cudaVersionFromInt(s[1]); ok {
				setStr(&n.DriverCUDAVersion, v)
			}
		}},
	{re: `Driver Version: ([0-9][0-9.]*[0-9])`, global: "Driver Version:",
		apply: func(n *Numbers, s []string) { setStr(&n.DriverVersion, s[1]) }},
	{re: `NVML library version: ([0-9][0-9.]*[0-9])`, global: "NVML library version:",
		apply: func(n *Numbers, s []string) { setStr(&n.DriverVersion, s[1]) }},
	{re: `\bCUDA Version: ([0-9]+\.[0-9]+)`, global: "CUDA Version:",
		apply: func(n *Numbers, s []string) { setStr(&n.DriverCUDAVersion, s[1]) }},
	{re: `CUDA Driver Version / Runtime Version\s+([0-9.]+) / ([0-9.]+)`, global: "CUDA Driver Version / Runtime Version",
		apply: func(n *Numbers, s []string) {
			setStr(&n.DriverCUDAVersion, s[1])
			setStr(&n.RuntimeVersion, s[2])
		}},
	{re: `CUDA used to build PyTorch: ([0-9]+\.[0-9.]+)`, global: "CUDA used to build PyTorch:",
		apply: func(n *Numbers, s []string) { setStr(&n.RuntimeVersion, s[1]) }},
	{re: `CUDA runtime version: ([0-9]+\.[0-9.]+)`, global: "CUDA runtime version:",
		apply: func(n *Numbers, s []string) { setStr(&n.RuntimeVersion, s[1]) }},

	// Error codes.
	{re: `(?:cuda runtime error|CUDA failure|NCCL Error|CuDNNError:?|CUDA error:|cudaGetDeviceProperties returned|Error)\s\(?(\d{1,4})\)?\b|\b(?:code|error)=(\d{1,4})\b`,
		apply: func(n *Numbers, s []string) { setInt(&n.ErrorCode, s[1]+s[2]) }},
	{re: `status == \w+ \((\d+) vs`, apply: func(n *Numbers, s []string) { setInt(&n.ErrorCode, s[1]) }},

	// Operators and precisions.
	{re: `operator '([^']{1,200})'`, apply: func(n *Numbers, s []string) { setStr(&n.Operator, s[1]) }},
	{re: `Could not run '([^']{1,200})'`, apply: func(n *Numbers, s []string) { setStr(&n.Operator, s[1]) }},
	{re: `"(\w{1,200})" not implemented for '(\w{1,40})'`,
		apply: func(n *Numbers, s []string) {
			setStr(&n.Operator, s[1])
			setStr(&n.DType, s[2])
		}},
	{re: `(BFloat16|bfloat16|Float16|float16|float64|Half) is not supported`,
		apply: func(n *Numbers, s []string) { setStr(&n.DType, s[1]) }},
	{re: `convert a MPS Tensor to (\w{1,40}) dtype`, apply: func(n *Numbers, s []string) { setStr(&n.DType, s[1]) }},
	{re: `Trying to convert (\w{1,40}) to the MPS backend`, apply: func(n *Numbers, s []string) { setStr(&n.DType, s[1]) }},
	{re: `[Ee]xpected (?:object of )?scalar type (\w{1,40}) but (?:found|got)(?: scalar type)? (\w{1,40})`,
		apply: func(n *Numbers, s []string) { setStr(&n.DType, s[1]+"/"+s[2]) }},
	{re: `same dtype, but got:? (\w{1,40})\s?(?:and|!=)\s?([\w:]{1,40})`,
		apply: func(n *Numbers, s []string) { setStr(&n.DType, s[1]+"/"+strings.TrimPrefix(s[2], "c10::")) }},
	{re: `found at least two devices, ([\w:]{1,20}) and ([\w:]{1,20})`,
		apply: func(n *Numbers, s []string) {
			if n.Devices == nil {
				n.Devices = []string{s[1], strings.TrimRight(s[2], "!")}
			}
		}},
}

// mismatchDevices reads the two device names of "found at least two
// devices, cuda:0 and cpu!".
func mismatchDevices(line string) []string {
	const key = "found at least two devices, "
	i := strings.Index(line, key)
	if i < 0 {
		return nil
	}
	rest := line[i+len(key):]
	a, b, ok := strings.Cut(rest, " and ")
	if !ok {
		return nil
	}
	b = strings.TrimLeft(b, " ")
	if j := strings.IndexAny(b, "! (,."); j >= 0 {
		b = b[:j]
	}
	return []string{strings.TrimSpace(a), b}
}

type compiledExtractor struct {
	extractor
	// re is compiled on first use; lit, the pattern's leading literal
	// text when it has one, lets a text without it skip the regexp (and
	// its compilation) altogether.
	re  func() *regexp.Regexp
	lit string
}

// literalPrefix is the plain text a pattern starts with, up to its first
// regexp metacharacter ("Tried to allocate " for `Tried to allocate \d+`).
func literalPrefix(pattern string) string {
	for i := 0; i < len(pattern); i++ {
		if strings.IndexByte(`\.+*?()|[]{}^$`, pattern[i]) >= 0 {
			return pattern[:i]
		}
	}
	return pattern
}

// find applies the extractor to s.
func (x *compiledExtractor) find(s string) []string {
	if x.lit != "" && !strings.Contains(s, x.lit) {
		return nil
	}
	return x.re().FindStringSubmatch(s)
}
