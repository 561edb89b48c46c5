package fixturegen

import (
	"github.com/devctl/devctl/internal/testutil/fakehost"
)

// Cases builds every fixture case, reading the real data under testdata.
func Cases(testdata string) ([]Case, error) {
	g := &gen{testdata: testdata}
	proc565 := g.read("nvidia/proc/open-565.57.01-ubuntu.txt")
	proc525 := g.read("nvidia/proc/open-525.60.11-arch.txt")
	const h100File = "nvidia/raw/h100-pcie-x2-full.json"
	h100 := g.nvmlFile(h100File)
	// healthy is the real H100 answers with every fault cleared (synthetic).
	healthy := func() *obj {
		h := clone(h100).(*obj)
		gpus, _ := h.get("gpus").([]any)
		for _, x := range gpus {
			gpu := x.(*obj)
			gpu.set("clocks_event_reasons", answer(1))
			gpu.set("mig_mode", answer(o("current", 0, "pending", 0)))
			gpu.set("remapped_rows", answer(o("correctable", 0, "uncorrectable", 0, "pending", false, "failure", false)))
			gpu.set("retired_pages_pending", answer(0))
			gpu.set("processes", answer([]any{}))
			gpu.set("pcie_width_current", answer(16))
			gpu.set("persistence_mode", answer(1))
			if d, ok := gpu.get("power_default_limit_mw").(*obj); ok && len(d.keys) > 0 {
				gpu.set("power_limit_mw", clone(d))
			}
		}
		return h
	}
	gpu := func(h *obj, i int) *obj { return h.get("gpus").([]any)[i].(*obj) }
	h2 := merge(nvPCI("0000:17:00.0", "2331", "30200", "nvidia"), nvPCI("0000:65:00.0", "2331", "30200", "nvidia"))
	pci07 := nvPCI("0000:07:00.0", "20B0", "30200", "nvidia")
	ver565 := fakehost.Files{"/proc/driver/nvidia/version": proc565}

	// 1 driver_loaded
	g.add("nvidia.driver_loaded", "pass", "pass", "pass", merge(pci07, ver565))
	g.add("nvidia.driver_loaded", "fail", "fail", "nouveau", merge(nvPCI("0000:01:00.0", "1C82", "30000", "nouveau"), fakehost.Files{"/sys/module/nouveau/initstate": "live\n"}))
	// 2 nvml_init
	g.add("nvidia.nvml_init", "pass", "pass", "pass", h2, "nvml_shared", h100File)
	g.add("nvidia.nvml_init", "fail", "fail", "LIB_RM_VERSION_MISMATCH", h2, "nvml_shared", "nvidia/raw/init-lib-rm-mismatch.json")
	// 3 version_match
	const lib = "/usr/lib/x86_64-linux-gnu/"
	g.add("nvidia.version_match", "pass", "pass", "pass", merge(pci07, ver565, fakehost.Files{lib + "libnvidia-ml.so.565.57.01": "", lib + "libnvidia-ml.so.1": fakehost.Link("libnvidia-ml.so.565.57.01")}))
	g.add("nvidia.version_match", "fail", "fail", "mismatch", merge(pci07, ver565, fakehost.Files{lib + "libnvidia-ml.so.570.86.15": "", lib + "libnvidia-ml.so.1": fakehost.Link("libnvidia-ml.so.570.86.15")}))
	// 4 device_nodes
	nodes := []string{"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}
	nodeFiles := func(ps []string) fakehost.Files {
		f := fakehost.Files{}
		for _, p := range ps {
			f[p] = ""
		}
		return f
	}
	g.add("nvidia.device_nodes", "pass", "pass", "pass", merge(pci07, ver565, nodeFiles(nodes)), "chmod", mode(nodes, "0666"), "uid", 1000, "groups", []string{"users"})
	g.add("nvidia.device_nodes", "fail", "fail", "missing_uvm", merge(pci07, ver565, nodeFiles(nodes[:2])), "chmod", mode(nodes[:2], "0666"), "uid", 1000, "groups", []string{"users"})
	g.add("nvidia.device_nodes", "fail-access", "fail", "no_access", merge(pci07, ver565, nodeFiles(nodes)),
		"chmod", map[string]any{"/dev/nvidiactl": "0660", "/dev/nvidia0": "0660", "/dev/nvidia-uvm": "0666", "/dev/nvidia-uvm-tools": "0666"}, "uid", 1000, "groups", []string{"users"})
	// 5 container
	docker := fakehost.Files{"/.dockerenv": "", "/dev/nvidiactl": "", "/dev/nvidia0": ""}
	allGPUs := env("NVIDIA_VISIBLE_DEVICES", "all")
	g.add("container.gpu_access", "pass", "pass", "pass_nodes", merge(pci07, docker), "env", allGPUs)
	g.add("container.gpu_access", "fail", "fail", "not_passed", fakehost.Files{"/.dockerenv": ""}, "env", allGPUs)
	// NVML init 999: nvidia-docker#1730 "Failed to initialize NVML: Unknown Error" (synthetic).
	g.add("container.gpu_access", "fail-lost", "fail", "lost", merge(pci07, docker), "env", allGPUs).NVML = o("version", 1, "source", "nvml", "init_ret", 999, "gpus", []any{})
	// 6 framework runtime
	const sp = "/home/u/venv/lib/python3.11/site-packages"
	venv := env("VIRTUAL_ENV", "/home/u/venv")
	g.add("cuda.framework_runtime", "pass", "pass", "pass", merge(pci07, ver565, fakehost.Files{
		sp + "/torch/version.py":                                     torchPy("2.5.1+cu124", "12.4"),
		sp + "/nvidia_cuda_runtime_cu12-12.4.127.dist-info/METADATA": "Name: nvidia-cuda-runtime-cu12\nVersion: 12.4.127\n",
	}), "env", venv)
	g.add("cuda.framework_runtime", "fail", "fail", "major", merge(pci07, fakehost.Files{"/proc/driver/nvidia/version": proc525, sp + "/torch/version.py": torchPy("2.9.0+cu130", "13.0")}), "env", venv)
	// 7 visible devices
	g.add("env.visible_devices", "pass", "pass", "pass", h2, "env", env("CUDA_VISIBLE_DEVICES", "0,1", "CUDA_DEVICE_ORDER", "PCI_BUS_ID"))
	g.add("env.visible_devices", "fail", "fail", "out_of_range", h2, "env", env("CUDA_VISIBLE_DEVICES", "0,3"))
	// 8 persistence
	g.add("nvidia.persistence_mode", "pass", "pass", "pass", h2).NVML = healthy()
	h := healthy()
	for i := range h.get("gpus").([]any) {
		gpu(h, i).set("persistence_mode", answer(0))
	}
	g.add("nvidia.persistence_mode", "fail", "warn", "off", h2).NVML = h
	// 9 fabric manager
	nvswitch := merge(nvPCI("0000:18:00.0", "2330", "30200", "nvidia"), nvPCI("0000:05:00.0", "22A3", "68000", ""))
	g.add("nvidia.fabric_manager", "pass", "pass", "pass_process", merge(nvswitch, fakehost.Files{"/proc/2210/comm": "nv-fabricmanager\n", "/proc/1/comm": "systemd\n"}))
	g.add("nvidia.fabric_manager", "fail", "fail", "no_process", merge(nvswitch, fakehost.Files{"/proc/1/comm": "systemd\n"}))
	// 10 pcie
	g.add("pcie.link_width", "pass", "pass", "pass", nvPCI("0000:17:00.0", "2331", "30200", "nvidia", 16, 16))
	g.add("pcie.link_width", "fail", "warn", "narrow", nvPCI("0000:17:00.0", "2331", "30200", "nvidia", 8, 16))
	g.add("pcie.link_width", "fail-two", "warn", "narrow_many", merge(nvPCI("0000:17:00.0", "2331", "30200", "nvidia", 8, 16), nvPCI("0000:65:00.0", "2331", "30200", "nvidia", 4, 16)))
	// 11 throttle: 0x40 is HwThermalSlowdown (synthetic)
	g.add("nvidia.throttle", "pass", "pass", "pass", h2).NVML = healthy()
	h = healthy()
	gpu(h, 1).set("clocks_event_reasons", answer(0x40))
	g.add("nvidia.throttle", "fail", "fail", "hw", h2).NVML = h
	// 12 ecc
	g.add("nvidia.ecc", "pass", "pass", "pass", h2).NVML = healthy()
	h = healthy()
	gpu(h, 0).set("remapped_rows", answer(o("correctable", 0, "uncorrectable", 9, "pending", false, "failure", true)))
	g.add("nvidia.ecc", "fail", "fail", "remap_failure", h2).NVML = h
	g.add("nvidia.ecc", "warn-pending", "warn", "pending", h2, "nvml_shared", h100File)
	// 13 mig
	g.add("nvidia.mig_pending", "pass", "pass", "pass", h2).NVML = healthy()
	g.add("nvidia.mig_pending", "fail", "warn", "pending", h2, "nvml_shared", h100File)
	// 14 memory in use
	g.add("gpu.memory_in_use", "pass", "pass", "pass", h2).NVML = healthy()
	h = healthy()
	gpu(h, 0).set("processes", answer([]any{o("pid", 4242, "used_memory_bytes", 30<<30), o("pid", 4243, "used_memory_bytes", 1<<30)}))
	g.add("gpu.memory_in_use", "fail", "warn", "busy", h2).NVML = h
	// 15 shm
	mem := g.read("hosts/ci-vm-amd64/proc/meminfo")
	g.add("host.shm_size", "pass", "pass", "pass", fakehost.Files{"/proc/meminfo": mem, "/proc/self/mountinfo": g.read("hosts/ci-vm-amd64/proc/self/mountinfo")})
	g.add("host.shm_size", "fail", "fail", "tiny", fakehost.Files{"/proc/meminfo": mem, "/proc/self/mountinfo": g.read("hosts/synthetic-docker-shm/proc/self/mountinfo")})
	g.add("host.shm_size", "warn-mounts", "warn", "small", fakehost.Files{"/proc/meminfo": mem,
		"/proc/mounts": "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\nshm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=524288k 0 0\n"})
	// 16 cgroup
	g.add("host.cgroup_limits", "pass", "pass", "pass", fakehost.Files{"/proc/meminfo": mem, "/proc/cpuinfo": g.read("hosts/ci-vm-amd64/proc/cpuinfo"),
		"/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids\n",
		"/sys/fs/cgroup/memory.max": "max\n", "/sys/fs/cgroup/cpu.max": "max 100000\n"})
	g.add("host.cgroup_limits", "fail", "warn", "limited", g.tree("hosts/synthetic-cgroup2-nested", "/"))
	// 17 p2p
	iommu := fakehost.Files{"/sys/kernel/iommu_groups/0/type": "DMA\n", "/sys/kernel/iommu_groups/1/type": "DMA\n"}
	g.add("multi_gpu.p2p_iommu", "pass", "pass", "pass", merge(h2, iommu, fakehost.Files{"/proc/cmdline": "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=0b5e ro intel_iommu=on iommu=pt quiet splash\n"}))
	g.add("multi_gpu.p2p_iommu", "fail", "warn", "translated", merge(h2, iommu, fakehost.Files{"/proc/cmdline": "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=0b5e ro intel_iommu=on quiet splash\n"}))
	// 18 rocm
	kfd := merge(g.tree("accel/rocm-mi210/sys/class/kfd/kfd/topology/nodes", "/sys/class/kfd/kfd/topology/nodes"), fakehost.Files{"/dev/kfd": "", "/dev/dri/renderD128": ""})
	rocmModes := map[string]any{"/dev/kfd": "0660", "/dev/dri/renderD128": "0660"}
	g.add("rocm.kfd_access", "pass", "pass", "pass", kfd, "chmod", rocmModes, "uid", 1000, "groups", []string{"users", "render", "video"})
	g.add("rocm.kfd_access", "fail", "fail", "no_access", kfd, "chmod", rocmModes, "uid", 1000, "groups", []string{"users"})
	// 19 tpu in use
	vfio := fakehost.Files{"/dev/vfio/0": "", "/dev/vfio/vfio": ""}
	g.add("tpu.in_use", "pass", "pass", "pass", merge(tpuPCI(), vfio, fakehost.Files{"/proc/120/comm": "bash\n", "/proc/120/fd/0": fakehost.Link("/dev/pts/0")}))
	g.add("tpu.in_use", "fail", "fail", "busy", merge(tpuPCI(), vfio, fakehost.Files{"/proc/4242/comm": "python3\n",
		"/proc/4242/fd/0": fakehost.Link("/dev/null"), "/proc/4242/fd/17": fakehost.Link("/dev/vfio/0")}))
	// 20 hugepages
	const thp = "/sys/kernel/mm/transparent_hugepage/enabled"
	g.add("tpu.hugepages", "pass", "pass", "pass", merge(tpuPCI(), fakehost.Files{thp: "[always] madvise never\n"}))
	g.add("tpu.hugepages", "fail", "warn", "off", merge(tpuPCI(), fakehost.Files{thp: "always [madvise] never\n"}))
	// 21 tpu env
	g.add("tpu.env_bounds", "pass", "pass", "pass", tpuPCI(), "env", env("TPU_CHIPS_PER_PROCESS_BOUNDS", "1,1,1", "TPU_PROCESS_BOUNDS", "1,1,1", "TPU_VISIBLE_CHIPS", "0"))
	g.add("tpu.env_bounds", "fail", "warn", "addresses", tpuPCI(), "env", env("TPU_PROCESS_ADDRESSES", "local:8476,local:8477,local:8478,local:8479", "TPU_PROCESS_PORT", "8476"))
	// 22 rosetta
	const m4, m1 = "accel/mac/sysctl-m4-macos15.txt", "accel/mac/sysctl-m1-rosetta-macos13.txt"
	g.add("apple.rosetta", "pass", "pass", "pass", nil, "os", "darwin", "arch", "arm64", "sysctl_shared", m4)
	g.add("apple.rosetta", "fail", "fail", "translated", nil, "os", "darwin", "arch", "amd64", "sysctl_shared", m1)
	// 23 macos version; the plist is synthetic, in SystemVersion.plist's layout
	g.add("apple.macos_version", "pass", "pass", "pass", nil, "os", "darwin", "arch", "arm64", "sysctl_shared", m4)
	g.add("apple.macos_version", "fail", "warn", "no_bf16", nil, "os", "darwin", "arch", "amd64", "sysctl_shared", m1)
	g.add("apple.macos_version", "fail-plist", "fail", "no_mps", fakehost.Files{"/System/Library/CoreServices/SystemVersion.plist": systemVersionPlist}, "os", "darwin", "arch", "arm64")
	// 24 watermark
	g.add("apple.mps_watermark", "pass", "pass", "pass", nil, "os", "darwin", "arch", "arm64", "env", env("PYTORCH_MPS_HIGH_WATERMARK_RATIO", "1.0", "PYTORCH_MPS_LOW_WATERMARK_RATIO", "0.8"))
	g.add("apple.mps_watermark", "fail", "fail", "below_low", nil, "os", "darwin", "arch", "arm64", "env", env("PYTORCH_MPS_HIGH_WATERMARK_RATIO", "1.0"))
	g.add("apple.mps_watermark", "warn-zero", "warn", "zero", nil, "os", "darwin", "arch", "arm64", "env", env("PYTORCH_MPS_HIGH_WATERMARK_RATIO", "0.0"))
	// 25 wsl
	g.add("platform.wsl2", "pass", "pass", "pass", fakehost.Files{"/dev/dxg": "", "/usr/lib/wsl/lib/libnvidia-ml.so.1": "", "/usr/lib/wsl/lib/libcuda.so.1": ""})
	g.add("platform.wsl2", "fail", "fail", "linux_driver", fakehost.Files{"/dev/dxg": "", "/usr/lib/wsl/lib/libnvidia-ml.so.1": "", "/proc/driver/nvidia/version": proc565})
	// 26 jetson
	const tegra = "# R35 (release), REVISION: 3.1, GCID: 32827747, BOARD: t186ref, EABI: aarch64, DATE: Sun Mar 19 15:19:21 UTC 2023\n"
	g.add("platform.jetson", "pass", "pass", "pass", fakehost.Files{"/etc/nv_tegra_release": tegra, "/proc/driver/nvidia/version": g.read("nvidia/proc/open-aarch64-jetson-35.3.1.txt")}, "arch", "arm64")
	g.add("platform.jetson", "fail", "warn", "cpu_torch", fakehost.Files{"/etc/nv_tegra_release": tegra, "/home/u/venv/lib/python3.8/site-packages/torch/version.py": torchPy("2.1.0", "")}, "arch", "arm64", "env", venv)
	// 27 avx2
	spr := g.read("hosts/x86-sapphire-rapids/proc/cpuinfo")
	g.add("cpu.avx2", "pass", "pass", "pass", fakehost.Files{"/proc/cpuinfo": spr}, "arch", "amd64")
	g.add("cpu.avx2", "fail", "warn", "no_avx2", fakehost.Files{"/proc/cpuinfo": removeAVX(spr)}, "arch", "amd64")
	// 28-30 env
	g.add("env.devctl", "pass", "pass", "pass", nil, "env", env("DEVCTL_DEVICE", "cuda:0", "DEVCTL_MEMORY_FRACTION", "0.8", "DEVCTL_MEMORY_STRATEGY", "custom"))
	g.add("env.devctl", "fail", "fail", "bad_env", nil, "env", env("DEVCTL_MEMORY_FRACTION", "1.5"))
	g.add("env.xla", "pass", "pass", "pass", nil, "env", env("XLA_PYTHON_CLIENT_MEM_FRACTION", ".75", "XLA_PYTHON_CLIENT_PREALLOCATE", "false", "XLA_FLAGS", "--xla_force_host_platform_device_count=8"))
	g.add("env.xla", "fail", "fail", "bad", nil, "env", env("XLA_PYTHON_CLIENT_MEM_FRACTION", "75"))
	g.add("env.pytorch", "pass", "pass", "pass", nil, "env", env("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True,max_split_size_mb:512,roundup_power2_divisions:[256:1,512:2,>:8]"))
	g.add("env.pytorch", "fail", "fail", "bad", nil, "env", env("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments=True"))
	// 31 torch build: the real venv trees of testdata/software
	g.add("software.torch_build", "pass", "pass", "pass", g.tree("software/venv-torch-cu124", "/"), "env", venv)
	g.add("software.torch_build", "warn-cpu-only", "warn", "cpu_only", g.tree("software/venv-torch-cpu-on-gpu", "/"), "env", venv)
	// jax and its CUDA plugin: real package lists (testdata/software/README.md)
	g.add("software.jax_plugin", "pass", "pass", "pass", g.tree("software/venv-jax-cuda12", "/"), "env", venv)
	g.add("software.jax_plugin", "warn-no-plugin", "warn", "no_cuda_plugin", g.tree("software/venv-jax-no-plugin", "/"), "env", venv)
	// 32 kernel log: real dmesg excerpts, verbatim (testdata/doctor/README.md)
	const nvsentinel = "logs/other/176-nvsentinel-155.log"
	dmesg := func(name, want, msg, text string) {
		g.add("kernel.device_errors", name, want, msg, nil, "commands", map[string]any{"dmesg": "dmesg.txt"}).Beside = map[string]string{"dmesg.txt": text}
	}
	dmesg("pass", "pass", "pass", g.lines(nvsentinel, 6, 6))
	dmesg("fail-fallen", "fail", "hardware", g.lines(nvsentinel, 2, 6))
	dmesg("warn-driver", "warn", "driver", dxvk1027)
	return g.cases, g.err
}

// dxvk1027 is the kernel log of https://github.com/doitsujin/dxvk/issues/1027
// (pshe94, 2019-08-03): Xid 31, 13 and 32 on one GPU.
const dxvk1027 = `[31543.449440] NVRM: GPU at PCI:0000:01:00: GPU-8a47641b-dff6-f09f-618c-c3eb58fb430d
[31543.449443] NVRM: Xid (PCI:0000:01:00): 31, Ch 0000003a, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_3 faulted @ 0x17_00592000. Fault is of type FAULT_PDE ACCESS_TYPE_READ
[31609.615230] NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception: Class 0x0 Subchannel 0x0 Mismatch
[31609.615231] NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception: ESR 0x4041b0=0x0
[31609.615232] NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception: ESR 0x404000=0x80000002
[31609.615374] NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception: ChID 0052, Class 00000000, Offset 00001b0c, Data 1000f010
[31609.615516] NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000052 intr 02000000
`

const systemVersionPlist = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>ProductBuildVersion</key>
	<string>21C52</string>
	<key>ProductCopyright</key>
	<string>1983-2021 Apple Inc.</string>
	<key>ProductName</key>
	<string>macOS</string>
	<key>ProductUserVisibleVersion</key>
	<string>12.1</string>
	<key>ProductVersion</key>
	<string>12.1</string>
</dict>
</plist>
`
