package software

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// maxHeader bounds how much of a METADATA file is parsed: the headers end
// at the first blank line, long before the description.
const maxHeader = 64 << 10

// Metadata is the part of a distribution's METADATA (core metadata) devctl
// reads: the headers, never the description.
type Metadata struct {
	Name         string
	Version      string
	RequiresDist []string
}

// ParseMetadata parses the RFC 822 style headers of a METADATA or PKG-INFO
// file, stopping at the first blank line or maxHeader bytes. Continuation
// lines and unknown headers are skipped.
func ParseMetadata(b []byte) Metadata {
	var m Metadata
	if len(b) > maxHeader {
		b = b[:maxHeader]
	}
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		s := strings.TrimRight(string(line), "\r")
		if strings.TrimSpace(s) == "" {
			break
		}
		if s[0] == ' ' || s[0] == '\t' {
			continue
		}
		k, v, ok := strings.Cut(s, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.ToLower(k) {
		case "name":
			m.Name = v
		case "version":
			m.Version = v
		case "requires-dist":
			if len(m.RequiresDist) < 256 {
				m.RequiresDist = append(m.RequiresDist, v)
			}
		}
	}
	return m
}

// Normalize is a distribution name as PEP 503 compares them: lower case,
// runs of "-", "_" and "." as one "-".
func Normalize(name string) string {
	var sb strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if r == '-' || r == '_' || r == '.' {
			dash = true
			continue
		}
		if dash && sb.Len() > 0 {
			sb.WriteByte('-')
		}
		dash = false
		sb.WriteRune(r)
	}
	return sb.String()
}

// ParseDistDir reads name and version from an installed distribution's
// directory name: "torch-2.6.0+cu124.dist-info" (the wheel spec escapes
// "-" in names, so the first "-" ends the name) or the setuptools form
// "torch-2.5.0a0+gitunknown-py3.13.egg-info". The name is normalized.
func ParseDistDir(dir string) (name, version string, ok bool) {
	base, isDist := strings.CutSuffix(dir, ".dist-info")
	if !isDist {
		var isEgg bool
		if base, isEgg = strings.CutSuffix(dir, ".egg-info"); !isEgg {
			return "", "", false
		}
	}
	name, version, ok = strings.Cut(base, "-")
	if !ok || name == "" || version == "" {
		return "", "", false
	}
	if !isDist {
		if i := strings.Index(version, "-py"); i > 0 {
			version = version[:i]
		}
	}
	return Normalize(name), version, true
}

// ParseCondaMeta reads a conda-meta file name, "name-version-build.json":
// conda forbids "-" in versions and builds, so the last two dashes split it.
func ParseCondaMeta(file string) (name, version, build string, ok bool) {
	base, isJSON := strings.CutSuffix(file, ".json")
	if !isJSON {
		return "", "", "", false
	}
	i := strings.LastIndexByte(base, '-')
	if i <= 0 {
		return "", "", "", false
	}
	build = base[i+1:]
	j := strings.LastIndexByte(base[:i], '-')
	if j <= 0 {
		return "", "", "", false
	}
	name, version = base[:j], base[j+1:i]
	if version == "" || build == "" {
		return "", "", "", false
	}
	return Normalize(name), version, build, true
}

// The patterns are compiled on first use, not at start-up: every devctl
// command pays for package initialisation, few read Python packages.
var (
	cudaTag   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^cu(\d{2,3})$`) })
	rocmTag   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^rocm(\d+(?:\.\d+){0,2})$`) })
	condaCUDA = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|[^A-Za-z])cuda_?(\d+)(?:\.(\d+))?`) })
	reqName   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*)\s*\(?\s*(?:===?|~=|>=)\s*([0-9][0-9.]*)`)
	})
)

// ParseLocalTag reads the accelerator from a version's local part, as the
// PyTorch indexes tag their wheels: "2.3.1+cu121" is CUDA 12.1, "+cu118"
// 11.8, "+rocm6.0" ROCm 6.0, "+cpu" CPU only, "+xpu" Intel XPU. ok is
// false when there is no tag devctl knows.
func ParseLocalTag(version string) (accel, accelVersion string, ok bool) {
	_, local, found := strings.Cut(version, "+")
	if !found {
		return "", "", false
	}
	local = strings.ToLower(local)
	switch {
	case local == "cpu" || strings.HasPrefix(local, "cpu."):
		return "cpu", "", true
	case local == "xpu":
		return "xpu", "", true
	}
	if m := cudaTag().FindStringSubmatch(local); m != nil {
		d := m[1]
		return "cuda", d[:len(d)-1] + "." + d[len(d)-1:], true
	}
	if m := rocmTag().FindStringSubmatch(local); m != nil {
		return "rocm", m[1], true
	}
	return "", "", false
}

// ParseCondaBuild reads a CUDA version from a conda build string. The
// channels spell it several ways: the pytorch channel "py3.11_cuda12.1_cudnn8.9.2_0"
// (12.1), before 1.5 "py3.7_cuda10.1.243_cudnn7.6.3_0" (10.1) and before
// 1.2 "py3.7_cuda90_cudnn7_1" (9.0); conda-forge "cuda129_mkl_py311_hb55e5d5_301"
// (12.9) and "cuda118py39h196c800_0" (11.8). Without a dot the last digit
// is the minor version, as in the wheels' cu118 tags, except that two
// digits starting with 1 are a bare major ("cuda12_0" is CUDA 12): no
// CUDA 1.x was ever packaged. "cpu" builds say cpu.
func ParseCondaBuild(build string) (accel, accelVersion string, ok bool) {
	if m := condaCUDA().FindStringSubmatch(build); m != nil {
		major, minor := m[1], m[2]
		if minor == "" {
			switch n := len(major); {
			case n == 2 && major[0] == '1', n == 1:
				return "cuda", major, true
			case n > 3:
				return "", "", false
			default:
				major, minor = major[:n-1], major[n-1:]
			}
		}
		return "cuda", major + "." + minor, true
	}
	if strings.HasPrefix(build, "cpu") || strings.Contains(build, "_cpu") {
		return "cpu", "", true
	}
	return "", "", false
}

// RequiredCUDARuntime finds the nvidia-cuda-runtime-cuXX pin among
// Requires-Dist values ("nvidia-cuda-runtime-cu12 (==12.4.127) ;
// platform_system == \"Linux\"") and returns "12.4" and the requirement's
// package name. Requirements behind an extra are optional and skipped.
func RequiredCUDARuntime(reqs []string) (cuda, pkg string, ok bool) {
	for _, r := range reqs {
		spec, marker, _ := strings.Cut(r, ";")
		if strings.Contains(marker, "extra") {
			continue
		}
		m := reqName().FindStringSubmatch(strings.TrimSpace(spec))
		if m == nil || !strings.HasPrefix(Normalize(m[1]), "nvidia-cuda-runtime-cu") {
			continue
		}
		if v, ok := majorMinor(m[2]); ok {
			return v, Normalize(m[1]), true
		}
	}
	return "", "", false
}

// majorMinor keeps "12.4" of "12.4.127".
func majorMinor(v string) (string, bool) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return "", false
	}
	if _, err := strconv.Atoi(parts[0]); err != nil {
		return "", false
	}
	if _, err := strconv.Atoi(parts[1]); err != nil {
		return "", false
	}
	return parts[0] + "." + parts[1], true
}

// ParseTorchVersionPy reads torch/version.py, which the build writes:
//
//	__version__ = '2.3.1+cu121'
//	cuda: Optional[str] = '12.1'
//	hip: Optional[str] = None
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

// ParseCUDAVersionJSON reads the toolkit's version.json (CUDA 11.1 and
// later): {"cuda": {"name": "CUDA SDK", "version": "12.1.1"}, ...}.
func ParseCUDAVersionJSON(b []byte) (string, bool) {
	var v struct {
		CUDA struct {
			Version string `json:"version"`
		} `json:"cuda"`
	}
	if len(b) > 1<<20 || json.Unmarshal(b, &v) != nil || v.CUDA.Version == "" {
		return "", false
	}
	if _, ok := majorMinor(v.CUDA.Version); !ok {
		return "", false
	}
	return v.CUDA.Version, true
}

// ParseCUDAVersionTxt reads the version.txt of toolkits before 11.1:
// "CUDA Version 10.2.89".
func ParseCUDAVersionTxt(b []byte) (string, bool) {
	s := strings.TrimSpace(string(b))
	v, ok := strings.CutPrefix(s, "CUDA Version ")
	if !ok {
		return "", false
	}
	v = strings.Fields(v + " ")[0]
	if _, ok := majorMinor(v); !ok {
		return "", false
	}
	return v, true
}

// ParseInstaller reads an INSTALLER file: its first line, trimmed, in
// lower case, at most 64 bytes of letters, digits, "-", "_" and "."; ""
// when it holds nothing like a tool name.
func ParseInstaller(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	s := strings.ToLower(strings.TrimSpace(string(b)))
	if s == "" || len(s) > 64 {
		return ""
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return ""
		}
	}
	return s
}
