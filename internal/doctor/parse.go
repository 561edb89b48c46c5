package doctor

import (
	"bytes"
	"strconv"
	"strings"
)

// ParseNvidiaVersion reads the kernel module version from
// /proc/driver/nvidia/version:
//
//	NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024
//	NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build ...
//
// It returns "" when the text has no NVRM line with a version.
func ParseNvidiaVersion(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "NVRM version:") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if isDriverVersion(f) {
				return f
			}
		}
	}
	return ""
}

// isDriverVersion accepts "550.90.07", "470.256.02" or "535.104": two or
// three dot-separated numbers, the first of three digits.
func isDriverVersion(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 3 || len(parts[0]) != 3 {
		return false
	}
	for _, p := range parts {
		if !isDigits(p) {
			return false
		}
	}
	return true
}

// ParseLDCache returns the library paths named in an /etc/ld.so.cache
// image whose base name starts with prefix (e.g. "libnvidia-ml.so").
// Both cache formats keep paths as NUL-terminated strings, so scanning for
// absolute paths is enough and never misreads a damaged file.
func ParseLDCache(b []byte, prefix string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range bytes.Split(b, []byte{0}) {
		i := bytes.IndexByte(s, '/')
		if i < 0 {
			continue
		}
		p := string(s[i:])
		base := p[strings.LastIndexByte(p, '/')+1:]
		if strings.HasPrefix(base, prefix) && printable(p) && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// libVersion extracts "550.90.07" from "libnvidia-ml.so.550.90.07".
func libVersion(name, lib string) string {
	base := name[strings.LastIndexByte(name, '/')+1:]
	v, ok := strings.CutPrefix(base, lib+".so.")
	if !ok || !isDriverVersion(v) {
		return ""
	}
	return v
}

// ParseCUDAVersion reads "12.4" (or "12.4.127") into major and minor.
func ParseCUDAVersion(s string) (major, minor int, ok bool) {
	s = strings.TrimSpace(s)
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return 0, 0, false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || ma < 0 || mi < 0 || ma > 99 || mi > 99 {
		return 0, 0, false
	}
	return ma, mi, true
}

// ParseTorchVersionPy reads torch/version.py, which torch's build writes as
//
//	__version__ = '2.3.1+cu121'
//	cuda: Optional[str] = '12.1'
//	hip: Optional[str] = None
//
// (older releases: `cuda = '11.8'`). It returns the torch version and the
// CUDA and HIP runtime versions ("" when None or absent).
func ParseTorchVersionPy(b []byte) (version, cuda, hip string) {
	for _, line := range strings.Split(string(b), "\n") {
		name, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		if i := strings.IndexByte(name, ':'); i >= 0 {
			name = strings.TrimSpace(name[:i])
		}
		v := pyString(val)
		switch name {
		case "__version__":
			version = v
		case "cuda":
			cuda = v
		case "hip":
			hip = v
		}
	}
	return version, cuda, hip
}

// pyString returns a quoted Python string literal's content, or "".
func pyString(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "#"); i > 0 && !strings.ContainsAny(s[:i], `'"`) {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return ""
}

// ParseMountOption finds a mount point in /proc/mounts and returns its
// file-system type and the value of one option ("size=65536k" -> "65536k").
func ParseMountOption(b []byte, mountPoint, option string) (fstype, value string, found bool) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[1] != mountPoint {
			continue
		}
		fstype, found, value = f[2], true, ""
		for _, o := range strings.Split(f[3], ",") {
			if k, v, ok := strings.Cut(o, "="); ok && k == option {
				value = v
			}
		}
	}
	return fstype, value, found
}

// ParseMountinfoOption is ParseMountOption for /proc/self/mountinfo,
// whose lines are "id parent maj:min root mountpoint opts [tags] - fstype
// source superopts"; tmpfs keeps size= in the super options.
func ParseMountinfoOption(b []byte, mountPoint, option string) (fstype, value string, found bool) {
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 6 || f[4] != mountPoint || len(g) < 1 {
			continue
		}
		fstype, found, value = g[0], true, ""
		opts := f[5]
		if len(g) >= 3 {
			opts += "," + g[2]
		}
		for _, o := range strings.Split(opts, ",") {
			if k, v, ok := strings.Cut(o, "="); ok && k == option {
				value = v
			}
		}
	}
	return fstype, value, found
}

// ParseSize reads a tmpfs size ("65536k", "8g", "1073741824") in bytes.
func ParseSize(s string) (int64, bool) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" {
		return 0, false
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'k':
		mult = 1 << 10
	case 'm':
		mult = 1 << 20
	case 'g':
		mult = 1 << 30
	case 't':
		mult = 1 << 40
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, false
	}
	return n * mult, true
}

// ParseMemTotalKB reads MemTotal from /proc/meminfo, in kB.
func ParseMemTotalKB(b []byte) (int64, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			return n, err == nil && n >= 0
		}
	}
	return 0, false
}

// ParseCPUInfo returns the number of processors and the x86 flags (or ARM
// features) of the first processor in /proc/cpuinfo, and whether the flags
// line is x86's "flags".
func ParseCPUInfo(b []byte) (processors int, flags map[string]bool, x86 bool) {
	flags = map[string]bool{}
	seenFlags := false
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		switch k {
		case "processor":
			processors++
		case "flags", "Features":
			if seenFlags {
				continue
			}
			seenFlags = true
			x86 = k == "flags"
			for _, f := range strings.Fields(v) {
				flags[f] = true
			}
		}
	}
	return processors, flags, x86
}
