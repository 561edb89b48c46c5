package explain

import (
	"strconv"
	"strings"
)

// torchBuilds are PyTorch's CUDA builds, newest first: the CUDA version a
// build ships and the install command PyTorch's own instructions give for
// it. Only builds whose command was read from a source are listed, so a
// driver newer than the newest listed gets that newest one, which its
// driver runs (a driver runs every CUDA release up to its own).
//
// Sources: https://pytorch.org/get-started/previous-versions/
// (pytorch/pytorch.github.io _get_started/previous-versions.md at
// e3f009bbc0d7509ed5c85b633313ec72aa2d1a40: v2.3.1 lists cu118 and cu121
// with --index-url; v2.0.1 cu117 and v1.13.1 cu116, v1.12.1 cu113 and
// cu102 with a pinned +cuXXX version, the latter two with
// --extra-index-url; v1.10.1 cu111 with -f .../cu111/torch_stable.html);
// cu124: torch 2.6.0+cu124, whose METADATA is quoted in
// https://github.com/pytorch/pytorch/issues/146679 (testdata/software).
// Builds before PyTorch 2.0 are pinned: unpinned, pip would take PyPI's
// newest torch, built for a newer CUDA, over the extra index.
var torchBuilds = []struct {
	major, minor int
	install      string
}{
	{12, 4, "pip install torch --index-url https://download.pytorch.org/whl/cu124"},
	{12, 1, "pip install torch --index-url https://download.pytorch.org/whl/cu121"},
	{11, 8, "pip install torch --index-url https://download.pytorch.org/whl/cu118"},
	{11, 7, "pip install torch==2.0.1+cu117 --index-url https://download.pytorch.org/whl/cu117"},
	{11, 6, "pip install torch==1.13.1+cu116 --extra-index-url https://download.pytorch.org/whl/cu116"},
	{11, 3, "pip install torch==1.12.1+cu113 --extra-index-url https://download.pytorch.org/whl/cu113"},
	{11, 1, "pip install torch==1.10.1+cu111 -f https://download.pytorch.org/whl/cu111/torch_stable.html"},
	{10, 2, "pip install torch==1.12.1+cu102 --extra-index-url https://download.pytorch.org/whl/cu102"},
}

// TorchInstall is the command that installs the newest PyTorch CUDA build
// a driver supporting CUDA driverCUDA ("11.4", "12") runs without relying
// on minor-version compatibility: the newest build whose CUDA is not newer
// than the driver's. ok is false for an unreadable version or a driver
// older than every listed build.
func TorchInstall(driverCUDA string) (install string, ok bool) {
	maj, min, ok := cudaVersion(driverCUDA)
	if !ok {
		return "", false
	}
	for _, b := range torchBuilds {
		if b.major < maj || (b.major == maj && b.minor <= min) {
			return b.install, true
		}
	}
	return "", false
}

// cudaVersion parses "12.4" (or "12", read as 12.0).
func cudaVersion(s string) (major, minor int, ok bool) {
	a, b, hasMinor := strings.Cut(strings.TrimSpace(s), ".")
	major, err := strconv.Atoi(a)
	if err != nil || major < 0 {
		return 0, 0, false
	}
	if hasMinor {
		b, _, _ = strings.Cut(b, ".")
		if minor, err = strconv.Atoi(b); err != nil || minor < 0 {
			return 0, 0, false
		}
	}
	return major, minor, true
}
