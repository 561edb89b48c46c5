package doctor

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/probe/nvidia"
)

// ParseNvidiaVersion reads the kernel module version from
// /proc/driver/nvidia/version:
//
//	NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024
//	NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build ...
//
// The line is read by the nvidia probe's parser; doctor keeps only versions
// of the shape libVersion also accepts, so that the two compare like for
// like. It returns "" otherwise, or when the text has no NVRM version line.
func ParseNvidiaVersion(b []byte) string {
	km, err := nvidia.ParseKernelModule(b)
	if err != nil || !isDriverVersion(km.Version) {
		return ""
	}
	return km.Version
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
