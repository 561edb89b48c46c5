package software_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/software"
	"github.com/devctl/devctl/internal/testutil/fakehost"
)

func tree(name string) string { return filepath.Join("..", "..", "..", "testdata", "software", name) }

func TestCollectOnRealEnvironments(t *testing.T) {
	tests := []struct {
		name      string
		tree      string
		env       map[string]string
		wantKind  string
		wantTorch *probe.FrameworkBuild
		wantCUDA  []string
		wantPkgs  int
		// wantList, when set, is every reported package as "name version installer build".
		wantList []string
	}{
		{"a venv with the torch 2.6.0+cu124 wheel and its nvidia-* wheels",
			"venv-torch-cu124", map[string]string{"VIRTUAL_ENV": "/home/u/venv"}, "venv",
			&probe.FrameworkBuild{Version: "2.6.0+cu124", Accelerator: "cuda", AcceleratorVersion: "12.4", Source: "version tag 2.6.0+cu124"},
			[]string{"12.4", "12.4"}, 11, nil},
		{"a venv with the CPU-only 2.7.0+cpu wheel",
			"venv-torch-cpu-on-gpu", map[string]string{"VIRTUAL_ENV": "/home/u/venv"}, "venv",
			&probe.FrameworkBuild{Version: "2.7.0+cpu", Accelerator: "cpu", Source: "version tag 2.7.0+cpu"},
			nil, 1, nil},
		{"a conda env with pytorch-cuda 11.8 found through CONDA_PREFIX",
			"conda-pytorch-cuda118", map[string]string{"CONDA_PREFIX": "/home/u/miniconda3/envs/lidar"}, "conda",
			nil, []string{"11.8"}, 3, nil},
		{"the same conda env found through PATH alone is not active",
			"conda-pytorch-cuda118", map[string]string{"PATH": "/home/u/miniconda3/envs/lidar/bin:/usr/bin"}, "conda",
			nil, []string{"11.8"}, 3, nil},
		{"a conda env whose pytorch build string names CUDA 11.3 (meta-pytorch/data#315)",
			"conda-pytorch111-cuda113", map[string]string{"CONDA_PREFIX": "/home/u/miniconda3/envs/torchdata"}, "conda",
			&probe.FrameworkBuild{Version: "1.11.0", Accelerator: "cuda", AcceleratorVersion: "11.3", Source: "conda build py3.8_cuda11.3_cudnn8.2.0_0"},
			[]string{"11.3"}, 3, []string{
				"pytorch 1.11.0 conda py3.8_cuda11.3_cudnn8.2.0_0",
				"pytorch-mutex 1.0 conda cuda",
				"torchaudio 0.11.0 conda py38_cu113",
			}},
		{"the CUDA conda env found through PATH alone",
			"conda-pytorch111-cuda113", map[string]string{"PATH": "/home/u/miniconda3/envs/torchdata/bin:/usr/bin"}, "conda",
			&probe.FrameworkBuild{Version: "1.11.0", Accelerator: "cuda", AcceleratorVersion: "11.3", Source: "conda build py3.8_cuda11.3_cudnn8.2.0_0"},
			[]string{"11.3"}, 3, nil},
		{"the same environment file solved to the CPU build (meta-pytorch/data#315)",
			"conda-pytorch111-cpu", map[string]string{"CONDA_PREFIX": "/home/u/miniconda3/envs/torchdata"}, "conda",
			&probe.FrameworkBuild{Version: "1.11.0", Accelerator: "cpu", Source: "conda build py3.8_cpu_0"},
			nil, 4, []string{
				"pytorch 1.11.0 conda py3.8_cpu_0",
				"pytorch-mutex 1.0 conda cpu",
				"torchaudio 0.11.0 conda py38_cpu",
				"torchvision 0.12.0 conda py38_cpu",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fakehost.RootHost(t, tree(tt.tree), tt.env)
			sw := software.Collect(context.Background(), h)
			if len(sw.Environments) != 1 {
				t.Fatalf("got %d environments, want 1: %+v", len(sw.Environments), sw.Environments)
			}
			e := sw.Environments[0]
			if e.Kind != tt.wantKind {
				t.Errorf("kind = %q, want %q", e.Kind, tt.wantKind)
			}
			if _, viaPath := tt.env["PATH"]; e.Active == viaPath {
				t.Errorf("active = %v", e.Active)
			}
			if diff := cmp.Diff(tt.wantTorch, e.Torch); diff != "" {
				t.Errorf("torch (-want +got)\n%s", diff)
			}
			var cuda []string
			for _, r := range e.CUDARuntimes {
				cuda = append(cuda, r.CUDA)
			}
			if diff := cmp.Diff(tt.wantCUDA, cuda); diff != "" {
				t.Errorf("CUDA runtimes (-want +got)\n%s", diff)
			}
			if len(e.Packages) != tt.wantPkgs {
				t.Errorf("got %d packages, want %d: %+v", len(e.Packages), tt.wantPkgs, e.Packages)
			}
			if tt.wantList != nil {
				var list []string
				for _, p := range e.Packages {
					list = append(list, p.Name+" "+p.Version+" "+p.Installer+" "+p.Build)
				}
				if diff := cmp.Diff(tt.wantList, list); diff != "" {
					t.Errorf("packages (-want +got)\n%s", diff)
				}
			}
		})
	}
}

func TestTorchBuildEvidenceOrder(t *testing.T) {
	// Synthetic: the same torch directory with different evidence.
	sp := "/v/lib/python3.12/site-packages/"
	tests := []struct {
		name  string
		files fakehost.Files
		want  probe.FrameworkBuild
	}{
		{"version.py wins over an untagged version", fakehost.Files{
			sp + "torch-2.3.1.dist-info/METADATA": "Name: torch\nVersion: 2.3.1\n",
			sp + "torch/version.py":               "__version__ = '2.3.1'\ncuda: Optional[str] = None\nhip: Optional[str] = '6.0.32830'\n",
		}, probe.FrameworkBuild{Version: "2.3.1", Accelerator: "rocm", AcceleratorVersion: "6.0.32830", Source: sp + "torch/version.py"}},
		{"an untagged PyPI wheel is CUDA when it requires the CUDA runtime wheel", fakehost.Files{
			sp + "torch-2.6.0.dist-info/METADATA": "Name: torch\nVersion: 2.6.0\n" + `Requires-Dist: nvidia-cuda-runtime-cu12==12.4.127; platform_system == "Linux" and platform_machine == "x86_64"` + "\n",
		}, probe.FrameworkBuild{Version: "2.6.0", Accelerator: "cuda", AcceleratorVersion: "12.4", Source: sp + "torch-2.6.0.dist-info/METADATA requires nvidia-cuda-runtime-cu12"}},
		{"an untagged wheel without CUDA requirements stays unknown", fakehost.Files{
			sp + "torch-2.6.0.dist-info/METADATA": "Name: torch\nVersion: 2.6.0\nRequires-Dist: filelock\n",
		}, probe.FrameworkBuild{Version: "2.6.0", Accelerator: "unknown", Source: sp + "torch-2.6.0.dist-info/METADATA"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fakehost.Host(t, tt.files, map[string]string{"VIRTUAL_ENV": "/v"})
			sw := software.Collect(context.Background(), h)
			if len(sw.Environments) != 1 || sw.Environments[0].Torch == nil {
				t.Fatalf("no torch found: %+v", sw)
			}
			if diff := cmp.Diff(tt.want, *sw.Environments[0].Torch); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestCUDAToolkit(t *testing.T) {
	tests := []struct {
		name  string
		files fakehost.Files
		env   map[string]string
		want  *probe.CUDAToolkit
	}{
		{"version.json under /usr/local/cuda", fakehost.Files{"/usr/local/cuda/version.json": `{"cuda": {"name": "CUDA SDK", "version": "12.1.1"}}`}, nil,
			&probe.CUDAToolkit{Version: "12.1.1", Path: "/usr/local/cuda", Source: "/usr/local/cuda/version.json"}},
		{"the nvcc on PATH wins over /usr/local/cuda", fakehost.Files{
			"/opt/cuda-11.8/bin/nvcc": "", "/opt/cuda-11.8/version.txt": "CUDA Version 11.8.89\n",
			"/usr/local/cuda/version.json": `{"cuda": {"version": "12.1.1"}}`}, map[string]string{"PATH": "/opt/cuda-11.8/bin"},
			&probe.CUDAToolkit{Version: "11.8.89", Path: "/opt/cuda-11.8", Source: "/opt/cuda-11.8/version.txt"}},
		{"only libcudart", fakehost.Files{"/usr/local/cuda/lib64/libcudart.so.12.4.127": ""}, nil,
			&probe.CUDAToolkit{Version: "12.4.127", Path: "/usr/local/cuda", Source: "/usr/local/cuda/lib64/libcudart.so.12.4.127"}},
		{"none", fakehost.Files{"/etc/hostname": "x"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fakehost.Host(t, tt.files, tt.env)
			if diff := cmp.Diff(tt.want, software.Collect(context.Background(), h).CUDAToolkit); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
