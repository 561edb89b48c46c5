package software

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cpuHead is the METADATA head of torch-2.7.0+cpu-cp310-cp310-manylinux_2_28_x86_64
// as quoted in https://github.com/pytorch/pytorch/issues/152121 (atalman).
const cpuHead = `Metadata-Version: 2.2
Name: torch
Version: 2.7.0+cpu
Summary: Tensors and Dynamic neural networks in Python with strong GPU acceleration
Home-page: https://pytorch.org/
`

// cu124Reqs are Requires-Dist lines of torch 2.6.0+cu124 as quoted in
// https://github.com/pytorch/pytorch/issues/146679.
const cu124Reqs = `Requires-Dist: nvidia-cuda-nvrtc-cu12 (==12.4.127) ; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: nvidia-cuda-runtime-cu12 (==12.4.127) ; platform_system == "Linux" and platform_machine == "x86_64"
`

func TestParseMetadata(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Metadata
	}{
		{"the CPU wheel's head gives name and version", cpuHead, Metadata{Name: "torch", Version: "2.7.0+cpu"}},
		{"requirements are kept in order", "Name: torch\nVersion: 2.6.0+cu124\n" + cu124Reqs, Metadata{Name: "torch", Version: "2.6.0+cu124", RequiresDist: []string{
			`nvidia-cuda-nvrtc-cu12 (==12.4.127) ; platform_system == "Linux" and platform_machine == "x86_64"`,
			`nvidia-cuda-runtime-cu12 (==12.4.127) ; platform_system == "Linux" and platform_machine == "x86_64"`}}},
		{"the description after the blank line is not read", "Name: a\nVersion: 1\n\nName: b\nVersion: 2\n", Metadata{Name: "a", Version: "1"}},
		{"CRLF line ends and continuation lines", "Name: a\r\nSummary: x\r\n  more\r\nVersion: 3\r\n", Metadata{Name: "a", Version: "3"}},
		{"garbage gives nothing", "\x00\xff:::\n", Metadata{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ParseMetadata([]byte(tt.in))); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte(cpuHead))
	f.Add([]byte("Name: torch\nVersion: 2.6.0+cu124\n" + cu124Reqs))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := ParseMetadata(b)
		RequiredCUDARuntime(m.RequiresDist)
		ParseLocalTag(m.Version)
	})
}

func TestParseDistDir(t *testing.T) {
	tests := []struct {
		in            string
		name, version string
		ok            bool
	}{
		{"torch-2.6.0+cu124.dist-info", "torch", "2.6.0+cu124", true},
		{"nvidia_cuda_runtime_cu12-12.4.127.dist-info", "nvidia-cuda-runtime-cu12", "12.4.127", true},
		{"Flask_SQLAlchemy-3.0.dist-info", "flask-sqlalchemy", "3.0", true},
		{"ms_swift-3.4.1.dist-info", "ms-swift", "3.4.1", true},
		// The egg-info form of a distribution-built torch (Fedora python3-torch, as a public issue thread lists it).
		{"torch-2.5.0a0+gitunknown-py3.13.egg-info", "torch", "2.5.0a0+gitunknown", true},
		{"torch", "", "", false},
		{"torch.dist-info", "", "", false},
		{"-1.0.dist-info", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			n, v, ok := ParseDistDir(tt.in)
			if n != tt.name || v != tt.version || ok != tt.ok {
				t.Errorf("ParseDistDir(%q) = %q, %q, %v; want %q, %q, %v", tt.in, n, v, ok, tt.name, tt.version, tt.ok)
			}
		})
	}
}

func TestParseCondaMeta(t *testing.T) {
	tests := []struct {
		in                   string
		name, version, build string
		ok                   bool
	}{
		// Names, versions and builds from `conda list` in zju3dv/LiDAR-RT#10.
		{"pytorch-cuda-11.8-h7e8668a_6.json", "pytorch-cuda", "11.8", "h7e8668a_6", true},
		{"pytorch-mutex-1.0-cuda.json", "pytorch-mutex", "1.0", "cuda", true},
		// From `conda list | grep pytorch` in meta-pytorch/data#315.
		{"pytorch-1.11.0-py3.8_cuda11.3_cudnn8.2.0_0.json", "pytorch", "1.11.0", "py3.8_cuda11.3_cudnn8.2.0_0", true},
		{"cpuonly-2.0-0.json", "cpuonly", "2.0", "0", true},
		{"history", "", "", "", false},
		{"x-1.json", "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			n, v, b, ok := ParseCondaMeta(tt.in)
			if n != tt.name || v != tt.version || b != tt.build || ok != tt.ok {
				t.Errorf("ParseCondaMeta(%q) = %q, %q, %q, %v", tt.in, n, v, b, ok)
			}
		})
	}
}

func TestParseLocalTag(t *testing.T) {
	tests := []struct {
		in, accel, version string
		ok                 bool
	}{
		{"2.3.1+cu121", "cuda", "12.1", true},
		{"1.13.1+cu116", "cuda", "11.6", true},
		{"2.6.0+cu126", "cuda", "12.6", true},
		{"2.1.0+cu92", "cuda", "9.2", true},
		{"2.3.0+rocm6.0", "rocm", "6.0", true},
		{"2.4.0+rocm6.1.3", "rocm", "6.1.3", true},
		{"2.7.0+cpu", "cpu", "", true},
		{"2.7.0+xpu", "xpu", "", true},
		{"2.6.0", "", "", false},
		{"2.5.0a0+gitunknown", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			a, v, ok := ParseLocalTag(tt.in)
			if a != tt.accel || v != tt.version || ok != tt.ok {
				t.Errorf("ParseLocalTag(%q) = %q, %q, %v", tt.in, a, v, ok)
			}
		})
	}
}

func TestRequiredCUDARuntime(t *testing.T) {
	tests := []struct {
		name string
		reqs []string
		want string
	}{
		{"the 2.6.0+cu124 pin (old style, parentheses)", ParseMetadata([]byte(cu124Reqs)).RequiresDist, "12.4"},
		{"the 2.7 style without parentheses", []string{`nvidia-cuda-runtime-cu12==12.6.77; platform_system == "Linux"`}, "12.6"},
		{"a pin behind an extra is optional", []string{`nvidia-cuda-runtime-cu12 >=12.2.140 ; extra == 'cuda12_pip'`}, ""},
		{"no nvidia requirement", []string{"filelock", "sympy==1.13.1"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, _ := RequiredCUDARuntime(tt.reqs)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseCondaBuild(t *testing.T) {
	// Real build strings, each from the public thread named.
	tests := []struct{ in, want, source string }{
		{"py3.11_cuda12.1_cudnn8.9.2_0", "cuda 12.1", "the earlier table"},
		{"py3.8_cuda10.2_cudnn7.6.5_0", "cuda 10.2", "the earlier table"},
		{"py3.8_cuda11.3_cudnn8.2.0_0", "cuda 11.3", "conda list in meta-pytorch/data#315"},
		{"py3.9_cuda11.6_cudnn8_0", "cuda 11.6", "package plan in pytorch/pytorch.github.io#1030"},
		{"py3.7_cuda10.1.243_cudnn7.6.3_0", "cuda 10.1", "collect_env [conda] in pytorch/pytorch#28321"},
		{"py3.7_cuda90_cudnn7_1", "cuda 9.0", "collect_env [conda] in pytorch/pytorch#27745"},
		{"cuda129_mkl_py311_hb55e5d5_301", "cuda 12.9", "conda-forge pytorch in conda-forge/pytorch-cpu-feedstock#390"},
		{"cuda130_mkl_h6edde62_300", "cuda 13.0", "conda-forge libtorch in conda-forge/pytorch-cpu-feedstock#521"},
		{"cuda118py39h196c800_0", "cuda 11.8", "conda list torchvision in verm/freebsd-stable-diffusion#7"},
		{"cuda100py37h72fc40a_0", "cuda 10.0", "conda search torchvision in verm/freebsd-stable-diffusion#7"},
		{"cuda90py27h6edc907_0", "cuda 9.0", "conda search torchvision in verm/freebsd-stable-diffusion#7"},
		{"cuda_11.3_0", "cuda 11.3", "conda list libastra in astra-toolbox/astra-toolbox#378"},
		{"py3.8_cpu_0", "cpu ", "conda list in meta-pytorch/data#315"},
		{"cpu_py311h6d93b4c_0", "cpu ", "the earlier table"},
		{"h7e8668a_6", " ", "pytorch-cuda's build names no CUDA"},
		{"cuda", " ", "pytorch-mutex's build"},
		// Synthetic edge cases.
		{"cuda12_0", "cuda 12", "a bare major, as cudnn and nccl builds write it"},
		{"cuda12345_0", " ", "no CUDA version has five digits"},
	}
	for _, tt := range tests {
		a, v, _ := ParseCondaBuild(tt.in)
		if a+" "+v != tt.want {
			t.Errorf("ParseCondaBuild(%q) (%s) = %q %q, want %q", tt.in, tt.source, a, v, tt.want)
		}
	}
}

func TestParseTorchVersionPyLayout(t *testing.T) {
	// The layout torch's build writes (tools/generate_torch_version.py).
	src := "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n__version__ = '2.3.1+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\ngit_version = '63d5e9221bedd1546b7d364b5ce4171547db12a9'\nhip: Optional[str] = None\n"
	v, c, h := ParseTorchVersionPy([]byte(src))
	if v != "2.3.1+cu121" || c != "12.1" || h != "" {
		t.Errorf("got %q %q %q", v, c, h)
	}
}

func TestParseCUDAToolkitVersion(t *testing.T) {
	// version.json as CUDA 11.1+ installs it (the head, as published in
	// many install notes); version.txt as CUDA 10.x wrote it.
	j := `{
   "cuda" : {
      "name" : "CUDA SDK",
      "version" : "11.8.20220929"
   },
   "cuda_nvcc" : {
      "name" : "CUDA NVCC",
      "version" : "11.8.89"
   }
}`
	if v, ok := ParseCUDAVersionJSON([]byte(j)); !ok || v != "11.8.20220929" {
		t.Errorf("json: %q %v", v, ok)
	}
	if _, ok := ParseCUDAVersionJSON([]byte(`{"cuda": {"version": "x"}}`)); ok {
		t.Error("a non-numeric version was accepted")
	}
	if v, ok := ParseCUDAVersionTxt([]byte("CUDA Version 10.2.89\n")); !ok || v != "10.2.89" {
		t.Errorf("txt: %q %v", v, ok)
	}
	if _, ok := ParseCUDAVersionTxt([]byte("")); ok {
		t.Error("empty version.txt accepted")
	}
}

func FuzzParseNames(f *testing.F) {
	f.Add("torch-2.6.0+cu124.dist-info")
	f.Add("pytorch-cuda-11.8-h7e8668a_6.json")
	f.Add("py3.11_cuda12.1_cudnn8.9.2_0")
	f.Add("py3.7_cuda10.1.243_cudnn7.6.3_0")
	f.Add("cuda129_mkl_py311_hb55e5d5_301")
	f.Fuzz(func(t *testing.T, s string) {
		ParseDistDir(s)
		ParseCondaMeta(s)
		ParseCondaBuild(s)
		ParseLocalTag(s)
		ParseCUDAVersionTxt([]byte(s))
		ParseCUDAVersionJSON([]byte(s))
		ParseTorchVersionPy([]byte(s))
		Normalize(s)
	})
}

func TestParseTorchVersionPy(t *testing.T) {
	tests := []struct{ name, in, ver, cuda, hip string }{
		{"a typed CUDA build", "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\nhip: Optional[str] = None\n", "2.5.1+cu124", "12.4", ""},
		{"an old untyped CUDA build", "__version__ = '1.13.1+cu117'\ndebug = False\ncuda = '11.7'\n", "1.13.1+cu117", "11.7", ""},
		{"a CPU build has no CUDA", "__version__ = '2.1.0'\ncuda: Optional[str] = None\n", "2.1.0", "", ""},
		{"a ROCm build names HIP", "__version__ = '2.4.0+rocm6.0'\ncuda: Optional[str] = None\nhip: Optional[str] = '6.0.32830-d62f6a171'\n", "2.4.0+rocm6.0", "", "6.0.32830-d62f6a171"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, c, h := ParseTorchVersionPy([]byte(tt.in))
			if v != tt.ver || c != tt.cuda || h != tt.hip {
				t.Errorf("got %q %q %q, want %q %q %q", v, c, h, tt.ver, tt.cuda, tt.hip)
			}
		})
	}
}
