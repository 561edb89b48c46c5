// Package software finds the ML software stack without starting Python:
// Python environments (VIRTUAL_ENV, CONDA_PREFIX, interpreters on PATH),
// the frameworks installed in them read from their *.dist-info and
// conda-meta entries, which accelerator torch was built for, and the
// system CUDA toolkit. Everything is read through the Host, so a snapshot
// records it and --sysroot/--from replay it.
//
// It is bounded: a few environments, only their site-packages directories
// (one listing each), and the metadata headers of a handful of packages.
package software

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

// Limits that keep a probe fast on any machine.
const (
	maxEnvs        = 4
	maxPathEntries = 32
	maxSiteDirs    = 4
	maxEntries     = 20000
	maxMetadata    = 1 << 20
)

// interesting are the distributions the report lists (normalized names);
// every nvidia-*, jax-cuda*, jax-rocm* and libtpu* wheel is listed too.
var interesting = map[string]bool{
	"torch": true, "torchvision": true, "torchaudio": true, "triton": true, "pytorch-triton-rocm": true,
	"jax": true, "jaxlib": true, "tensorflow": true, "tensorflow-cpu": true, "tensorflow-gpu": true,
	"tf-nightly": true, "keras": true, "transformers": true, "accelerate": true, "deepspeed": true,
	"bitsandbytes": true, "vllm": true, "torch-xla": true, "intel-extension-for-pytorch": true,
	"flash-attn": true, "xformers": true, "peft": true, "onnxruntime": true, "onnxruntime-gpu": true,
	"numpy": true, "safetensors": true, "huggingface-hub": true,
	// the stacks recommend plans for (recommend.StackFromSoftware)
	"trl": true, "torchtune": true, "litgpt": true, "unsloth": true, "axolotl": true, "llamafactory": true, "ms-swift": true, "nemo-automodel": true, "llm-foundry": true,
	"sglang": true, "text-generation-server": true, "mlx": true, "mlx-lm": true,
	// conda package names
	"pytorch": true, "pytorch-cuda": true, "pytorch-mutex": true, "cudatoolkit": true, "cuda-version": true,
	"cudnn": true, "nccl": true,
}

func wanted(name string) bool {
	return interesting[name] || strings.HasPrefix(name, "nvidia-") || strings.HasPrefix(name, "jax-cuda") ||
		strings.HasPrefix(name, "jax-rocm") || strings.HasPrefix(name, "libtpu")
}

// Driver is the probe driver for the software stack.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "software" }

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	sw := Collect(ctx, h)
	if err := ctx.Err(); err != nil {
		return probe.Result{Source: "site-packages"}, err
	}
	if len(sw.Environments) == 0 && sw.CUDAToolkit == nil {
		return probe.Result{Source: "site-packages", Software: sw}, probe.Absent("no Python environment (VIRTUAL_ENV, CONDA_PREFIX, python on PATH) and no CUDA toolkit")
	}
	return probe.Result{Source: "site-packages", Software: sw, Detail: Detail(sw)}, nil
}

// Detail is the drivers[] line: "2 environment(s), torch 2.6.0+cu124 (cuda 12.4), CUDA toolkit 12.1.1".
func Detail(sw *probe.Software) string {
	parts := []string{fmt.Sprintf("%d Python environment(s)", len(sw.Environments))}
	for _, e := range sw.Environments {
		if e.Torch != nil {
			t := "torch " + e.Torch.Version + " (" + e.Torch.Accelerator
			if e.Torch.AcceleratorVersion != "" {
				t += " " + e.Torch.AcceleratorVersion
			}
			parts = append(parts, t+")")
			break
		}
	}
	if sw.CUDAToolkit != nil {
		parts = append(parts, "CUDA toolkit "+sw.CUDAToolkit.Version)
	}
	return strings.Join(parts, ", ")
}

// Collect finds the environments and the toolkit. It never fails: what
// cannot be read is left out.
func Collect(ctx context.Context, h *host.Host) *probe.Software {
	sw := &probe.Software{Environments: []probe.PythonEnv{}}
	if h == nil || h.FS == nil {
		return sw
	}
	for _, c := range candidates(h) {
		if ctx.Err() != nil || len(sw.Environments) >= maxEnvs {
			break
		}
		if env, ok := readEnv(h, c); ok {
			sw.Environments = append(sw.Environments, env)
		}
	}
	sw.CUDAToolkit = toolkit(h)
	return sw
}

type candidate struct {
	prefix string
	kind   string // venv, conda, "" (decide from the tree)
	active bool
	// interpreter is the Python to run for this environment; via says how
	// a PATH entry was resolved to it (a pyenv or asdf shim, a link).
	interpreter, via string
}

// candidates lists environment prefixes: the active venv, the active conda
// environment, then the prefix of each python on PATH, without repeats.
func candidates(h *host.Host) []candidate {
	var out []candidate
	seen := map[string]bool{}
	add := func(c candidate) {
		if !strings.HasPrefix(c.prefix, "/") {
			return
		}
		c.prefix = path.Clean(c.prefix)
		if seen[c.prefix] {
			return
		}
		seen[c.prefix] = true
		out = append(out, c)
	}
	if v, ok := h.LookupEnv("VIRTUAL_ENV"); ok && strings.HasPrefix(v, "/") {
		add(candidate{prefix: v, kind: "venv", active: true, interpreter: exe(h, path.Clean(v)+"/bin")})
	}
	if v, ok := h.LookupEnv("CONDA_PREFIX"); ok && strings.HasPrefix(v, "/") {
		add(candidate{prefix: v, kind: "conda", active: true, interpreter: exe(h, path.Clean(v)+"/bin")})
	}
	pathVar, _ := h.LookupEnv("PATH")
	passed := "" // a shim that passed through to the system Python
	for i, dir := range strings.Split(pathVar, ":") {
		if i >= maxPathEntries {
			break
		}
		if !strings.HasPrefix(dir, "/") {
			continue
		}
		it, ok := resolvePathEntry(h, path.Clean(dir))
		if !ok {
			if it.system && passed == "" {
				passed = it.via
			}
			continue
		}
		if it.via == "" && passed != "" {
			it.via = passed
		}
		passed = ""
		add(candidate{prefix: it.prefix, interpreter: it.path, via: it.via})
	}
	return out
}

func readEnv(h *host.Host, c candidate) (probe.PythonEnv, bool) {
	env := probe.PythonEnv{Kind: c.kind, Prefix: c.prefix, Active: c.active, Interpreter: c.interpreter, Via: c.via,
		SitePackages: []string{}, Packages: []probe.Package{}}
	isConda := h.Exists(c.prefix + "/conda-meta")
	switch {
	case isConda:
		env.Kind = "conda"
	case env.Kind == "" && h.Exists(c.prefix+"/pyvenv.cfg"):
		env.Kind = "venv"
	case env.Kind == "":
		env.Kind = "system"
	}
	dirs, pyVer := siteDirs(h, c.prefix)
	env.PythonVersion = pyVer
	byName := map[string]int{}
	for _, sp := range dirs {
		ents, err := h.FS.ReadDir(sp)
		if err != nil {
			continue
		}
		env.SitePackages = append(env.SitePackages, sp)
		hasTorchDir := false
		for i, e := range ents {
			if i >= maxEntries {
				break
			}
			if e.Name() == "torch" {
				hasTorchDir = true
			}
			name, version, ok := ParseDistDir(e.Name())
			if !ok || !wanted(name) {
				continue
			}
			if _, dup := byName[name]; dup {
				continue
			}
			byName[name] = len(env.Packages)
			env.Packages = append(env.Packages, probe.Package{Name: name, Version: version, Installer: installerOf(h, sp, e.Name())})
			if name == "torch" {
				env.Torch = torchBuild(h, sp, e.Name(), version)
			}
		}
		if hasTorchDir && env.Torch == nil {
			// A torch package without metadata (a source build in
			// develop mode, a copied tree): version.py alone decides.
			if t := torchBuild(h, sp, "", ""); t.Version != "" {
				env.Torch = t
				byName["torch"] = len(env.Packages)
				env.Packages = append(env.Packages, probe.Package{Name: "torch", Version: t.Version, Installer: InstallerUnknown})
			}
		}
	}
	if isConda {
		condaPackages(h, c.prefix, &env, byName)
	}
	if len(env.SitePackages) == 0 && len(env.Packages) == 0 {
		return env, false
	}
	sort.Slice(env.Packages, func(i, j int) bool { return env.Packages[i].Name < env.Packages[j].Name })
	env.CUDARuntimes = cudaRuntimes(env)
	return env, true
}

// siteDirs lists prefix/lib{,64}/python3.X/{site,dist}-packages and the
// Debian prefix/lib/python3/dist-packages, and the Python version the
// directory names give.
func siteDirs(h *host.Host, prefix string) ([]string, string) {
	var out []string
	pyVer := ""
	for _, lib := range []string{prefix + "/lib", prefix + "/lib64", prefix + "/local/lib"} {
		ents, err := h.FS.ReadDir(lib)
		if err != nil {
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if !strings.HasPrefix(n, "python3") {
				continue
			}
			for _, sub := range []string{"site-packages", "dist-packages"} {
				d := lib + "/" + n + "/" + sub
				if len(out) < maxSiteDirs && h.Exists(d) {
					out = append(out, d)
					if v := strings.TrimPrefix(n, "python"); pyVer == "" && strings.Contains(v, ".") {
						pyVer = v
					}
				}
			}
		}
	}
	return out, pyVer
}

// torchBuild decides which accelerator torch was built for, from the most
// direct evidence first: torch/version.py (written by the build), the
// version's local tag, the CUDA runtime wheel it requires.
func torchBuild(h *host.Host, site, distDir, version string) *probe.FrameworkBuild {
	b := &probe.FrameworkBuild{Version: version, Accelerator: "unknown"}
	if data, err := h.FS.ReadFile(site + "/torch/version.py"); err == nil {
		v, cuda, hip := ParseTorchVersionPy(data)
		if v != "" {
			b.Version = v
		}
		switch {
		case cuda != "":
			b.Accelerator, b.AcceleratorVersion = "cuda", cuda
		case hip != "":
			b.Accelerator, b.AcceleratorVersion = "rocm", hip
		default:
			b.Accelerator = "cpu"
		}
		b.Source = site + "/torch/version.py"
		if b.Accelerator != "cpu" {
			return b
		}
		// A CPU version.py is final unless the tag says xpu.
		if a, _, ok := ParseLocalTag(b.Version); !ok || a != "xpu" {
			return b
		}
	}
	if a, av, ok := ParseLocalTag(version); ok {
		b.Accelerator, b.AcceleratorVersion, b.Source = a, av, "version tag "+version
		return b
	}
	if distDir == "" {
		return b
	}
	meta := site + "/" + distDir + "/METADATA"
	if data, err := h.FS.ReadFile(meta); err == nil && len(data) <= maxMetadata {
		m := ParseMetadata(data)
		if cuda, pkg, ok := RequiredCUDARuntime(m.RequiresDist); ok {
			b.Accelerator, b.AcceleratorVersion, b.Source = "cuda", cuda, meta+" requires "+pkg
			return b
		}
		b.Source = meta
	}
	return b
}

// condaPackages adds conda's own packages (conda-meta/*.json names) and
// decides torch's build from conda's pytorch build string.
func condaPackages(h *host.Host, prefix string, env *probe.PythonEnv, byName map[string]int) {
	ents, err := h.FS.ReadDir(prefix + "/conda-meta")
	if err != nil {
		return
	}
	var pt, ptCUDA *probe.Package
	for i, e := range ents {
		if i >= maxEntries {
			break
		}
		name, version, build, ok := ParseCondaMeta(e.Name())
		if !ok || !wanted(name) {
			continue
		}
		if i, dup := byName[name]; dup {
			// A site-packages entry conda put there without naming
			// itself: conda-meta says it is conda's.
			if p := &env.Packages[i]; p.Installer == InstallerUnknown && p.Version == version {
				p.Installer, p.Build = "conda", build
			}
			continue
		}
		byName[name] = len(env.Packages)
		env.Packages = append(env.Packages, probe.Package{Name: name, Version: version, Installer: "conda", Build: build})
	}
	for i := range env.Packages {
		switch p := &env.Packages[i]; p.Name {
		case "pytorch":
			pt = p
		case "pytorch-cuda":
			ptCUDA = p
		}
	}
	if env.Torch != nil || pt == nil {
		return
	}
	b := &probe.FrameworkBuild{Version: pt.Version, Accelerator: "unknown", Source: prefix + "/conda-meta"}
	if a, av, ok := ParseCondaBuild(pt.Build); ok {
		b.Accelerator, b.AcceleratorVersion, b.Source = a, av, "conda build "+pt.Build
	} else if ptCUDA != nil {
		if v, ok := majorMinor(ptCUDA.Version + ".0"); ok {
			b.Accelerator, b.AcceleratorVersion, b.Source = "cuda", v, "conda pytorch-cuda "+ptCUDA.Version
		}
	}
	env.Torch = b
}

// cudaRuntimes lists what the environment's packages say about the CUDA
// runtime: torch's build, nvidia-cuda-runtime-cuXX wheels, jax CUDA plugins.
func cudaRuntimes(env probe.PythonEnv) []probe.CUDARuntime {
	var out []probe.CUDARuntime
	if t := env.Torch; t != nil && t.Accelerator == "cuda" && t.AcceleratorVersion != "" {
		out = append(out, probe.CUDARuntime{Package: "torch " + t.Version, CUDA: t.AcceleratorVersion, Source: t.Source})
	}
	for _, p := range env.Packages {
		switch {
		case strings.HasPrefix(p.Name, "nvidia-cuda-runtime-cu"):
			if v, ok := majorMinor(p.Version); ok {
				out = append(out, probe.CUDARuntime{Package: p.Name + " " + p.Version, CUDA: v, Source: "installed " + p.Name})
			}
		case strings.HasPrefix(p.Name, "jax-cuda") && (strings.HasSuffix(p.Name, "-plugin") || strings.HasSuffix(p.Name, "-pjrt")):
			major := strings.TrimPrefix(p.Name, "jax-cuda")
			major = major[:strings.IndexByte(major, '-')]
			out = append(out, probe.CUDARuntime{Package: p.Name + " " + p.Version, CUDA: major, Source: "installed " + p.Name})
		case p.Name == "pytorch-cuda" || p.Name == "cudatoolkit":
			if v, ok := majorMinor(p.Version + ".0"); ok {
				out = append(out, probe.CUDARuntime{Package: p.Name + " " + p.Version, CUDA: v, Source: "conda " + p.Name})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return CUDALess(out[j].CUDA, out[i].CUDA) })
	return out
}

// CUDALess compares CUDA versions: "12.4" < "12.6"; a bare major ("12") is x.0.
func CUDALess(a, b string) bool {
	am, an := splitCUDA(a)
	bm, bn := splitCUDA(b)
	if am != bm {
		return am < bm
	}
	return an < bn
}

func splitCUDA(s string) (int, int) {
	var ma, mi int
	parts := strings.SplitN(strings.TrimSpace(s), ".", 3)
	fmt.Sscanf(parts[0], "%d", &ma)
	if len(parts) > 1 {
		fmt.Sscanf(parts[1], "%d", &mi)
	}
	return ma, mi
}

// toolkit finds the system CUDA toolkit: $CUDA_HOME, $CUDA_PATH, the nvcc
// on PATH, /usr/local/cuda; version.json, else version.txt, else the
// libcudart.so.X.Y.Z file name.
func toolkit(h *host.Host) *probe.CUDAToolkit {
	var roots []string
	for _, v := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if p, ok := h.LookupEnv(v); ok && strings.HasPrefix(p, "/") {
			roots = append(roots, path.Clean(p))
		}
	}
	pathVar, _ := h.LookupEnv("PATH")
	for i, dir := range strings.Split(pathVar, ":") {
		if i >= maxPathEntries {
			break
		}
		if strings.HasPrefix(dir, "/") && h.Exists(path.Clean(dir)+"/nvcc") {
			roots = append(roots, path.Dir(path.Clean(dir)))
		}
	}
	roots = append(roots, "/usr/local/cuda")
	for _, r := range roots {
		if b, err := h.FS.ReadFile(r + "/version.json"); err == nil {
			if v, ok := ParseCUDAVersionJSON(b); ok {
				return &probe.CUDAToolkit{Version: v, Path: r, Source: r + "/version.json"}
			}
		}
		if b, err := h.FS.ReadFile(r + "/version.txt"); err == nil {
			if v, ok := ParseCUDAVersionTxt(b); ok {
				return &probe.CUDAToolkit{Version: v, Path: r, Source: r + "/version.txt"}
			}
		}
		for _, lib := range []string{r + "/lib64", r + "/lib", r + "/targets/x86_64-linux/lib", r + "/targets/sbsa-linux/lib"} {
			ents, err := h.FS.ReadDir(lib)
			if err != nil {
				continue
			}
			for _, e := range ents {
				if v, ok := strings.CutPrefix(e.Name(), "libcudart.so."); ok {
					if _, ok := majorMinor(v); ok {
						return &probe.CUDAToolkit{Version: v, Path: r, Source: lib + "/" + e.Name()}
					}
				}
			}
		}
	}
	return nil
}

// Installer names.
const (
	// InstallerUnknown: the metadata does not say who installed it.
	InstallerUnknown = "unknown"
	// InstallerDebian: a Debian (or Ubuntu) package, installed by dpkg.
	InstallerDebian = "debian"
)

// debianDist is where Debian's Python packages install: the Debian Python
// Policy (https://www.debian.org/doc/packaging-manuals/python-policy/,
// "Module path") keeps /usr/lib/python3/dist-packages for Debian packages
// and sends local installs (pip) to /usr/local/lib/python3.X/dist-packages.
// Their .dist-info directories carry no INSTALLER file (observed on Debian
// 12: python3-yaml, python3-attrs, ... and python3-torch's egg-info).
const debianDist = "/usr/lib/python3/dist-packages"

// installerOf names who installed a distribution, as its metadata says:
// the INSTALLER file of a .dist-info (the PyPA "Recording installed
// projects" specification: the name of the tool, e.g. pip, uv, conda,
// rpm; uv writes "uv" without a newline); without one, a package in
// Debian's dist-packages is "debian", anything else "unknown". An
// .egg-info never has one.
func installerOf(h *host.Host, site, distDir string) string {
	if strings.HasSuffix(distDir, ".dist-info") {
		if b, err := h.FS.ReadFile(site + "/" + distDir + "/INSTALLER"); err == nil {
			if name := ParseInstaller(b); name != "" {
				return name
			}
		}
	}
	if site == debianDist {
		return InstallerDebian
	}
	return InstallerUnknown
}
