package main

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing/fstest"
	"time"

	"github.com/devctl/devctl/internal/host"
)

// Created is every generated snapshot's time, and so the clock of its
// replay: a fixed value keeps the archives byte-for-byte reproducible.
var Created = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Version is stored as devctl_version in the generated archives, so a
// reader of a manifest knows it came from fixtures, not from a machine.
const Version = "mksnap"

// Machine is one fixture machine to record.
type Machine struct {
	// Name is the archive's file name without .tar.gz.
	Name string
	// Family is the device family the snapshot exists to test.
	Family string
	// From says which fixtures the machine is built from (for -list).
	From string
	// Build assembles the host from the fixtures directory (testdata/).
	Build func(fixtures string) (*host.Host, error)
}

// Identities the machines run as. Fixture trees keep device nodes as plain
// files (a checkout cannot hold character devices), so the Linux trees are
// recorded as root, the way `sudo devctl snapshot` records a machine.
var (
	rootUser  = host.Identity{UID: 0, Groups: []string{"root"}}
	gpuUser   = host.Identity{UID: 1000, Groups: []string{"users", "video"}}
	macUser   = host.Identity{UID: 501, Groups: []string{"staff", "admin"}}
	noEnvVars = map[string]string{}
)

// Machines is every snapshot the generator writes, in the order of
// testdata/snapshots/README.md.
var Machines = []Machine{
	// Accelerator fixture trees (testdata/accel/README.md has their sources).
	tree("tpu-v6e-8", "xla", "accel/tpu-v6e-8", "amd64", map[string]string{"TPU_ACCELERATOR_TYPE": "v6e-8", "PJRT_DEVICE": "TPU"}, nil),
	tree("rocm-mi210", "rocm", "accel/rocm-mi210", "amd64", noEnvVars, nil),
	tree("rocm-mi300x-cpx", "rocm", "accel/rocm-mi300x-cpx", "amd64", noEnvVars, nil),
	tree("rocm-mi308x-cpx", "rocm", "accel/rocm-mi308x-cpx", "amd64", noEnvVars, nil),
	tree("xpu-arc-bmg-igpu", "xpu", "accel/xpu-arc-bmg-igpu", "amd64", noEnvVars, nil),
	tree("neuron-inf2-ena", "neuron", "accel/neuron-inf2-ena", "amd64", noEnvVars, nil),

	// CPU-only hosts: a real /proc/cpuinfo (testdata/hosts/README.md) plus a
	// synthetic /proc/meminfo, without which recommend has no memory to plan.
	tree("cpu-x86-sapphire-rapids", "cpu", "hosts/x86-sapphire-rapids", "amd64", noEnvVars,
		fstest.MapFS{"proc/meminfo": {Data: meminfo(64 << 20)}}),
	tree("cpu-arm64-axion", "cpu", "hosts/arm64-axion", "arm64", noEnvVars,
		fstest.MapFS{"proc/meminfo": {Data: meminfo(32 << 20)}}),
	tree("cpu-s390x-z13", "cpu", "hosts/s390x-z13", "s390x", noEnvVars,
		fstest.MapFS{"proc/meminfo": {Data: meminfo(16 << 20)}}),

	{Name: "nvidia-h100-pcie-x2", Family: "cuda", From: "NVML answer testdata/nvidia/raw/h100-pcie-x2-full.json; /proc/driver/nvidia/version in the format of testdata/nvidia/proc/open-565.57.01-ubuntu.txt", Build: nvidiaH100},
	{Name: "nvidia-driver-mismatch-580", Family: "cuda", From: "NVML answer testdata/nvidia/raw/init-lib-rm-mismatch.json; nvidia-smi testdata/nvidia/smi/err-version-mismatch-580.txt; /proc/driver/nvidia/version testdata/nvidia/proc/proprietary-580.173.02-truenas.txt", Build: nvidiaMismatch},

	// The recorded sysctl answers carry what the mps driver reads; every Mac
	// also answers hw.logicalcpu, added here (Apple silicon has one thread
	// per core; the i9-9980HK has 8 cores, 16 threads) so the cpu driver
	// does not see zero CPUs.
	mac("mac-m4-macos15", "arm64", "accel/mac/sysctl-m4-macos15.txt", map[string]string{"hw.logicalcpu": "10"},
		map[string]answer{"ioreg -rc AGXAccelerator": {file: "accel/mac/ioreg-m4.txt"}}),
	// Under Rosetta 2 the devctl binary is x86_64, so the host's Arch (the
	// binary's GOARCH, as host.Local records it) is amd64 on an M1.
	mac("mac-m1-rosetta-macos13", "amd64", "accel/mac/sysctl-m1-rosetta-macos13.txt", map[string]string{"hw.logicalcpu": "8"},
		map[string]answer{"ioreg -rc AGXAccelerator": {file: "accel/mac/ioreg-m1.txt"}}),
	mac("mac-intel-amd-macos14", "amd64", "accel/mac/sysctl-intel-amd-macos14.txt", map[string]string{"hw.logicalcpu": "16"},
		map[string]answer{"system_profiler SPDisplaysDataType -json": {file: "accel/mac/system_profiler-intel-amd.json"}}),
}

// tree is a Linux machine whose file system is a fixture tree, optionally
// with extra files layered under it.
func tree(name, family, dir, arch string, env map[string]string, extra fstest.MapFS) Machine {
	from := "testdata/" + dir
	if extra != nil {
		from += " + synthetic /proc/meminfo"
	}
	return Machine{Name: name, Family: family, From: from, Build: func(fixtures string) (*host.Host, error) {
		h, err := host.Local(host.LocalOptions{Sysroot: filepath.Join(fixtures, filepath.FromSlash(dir))})
		if err != nil {
			return nil, err
		}
		if extra != nil {
			h.FS = layerFS{h.FS, memFS{extra}}
		}
		h.OS, h.Arch = "linux", arch
		h.Hostname = name
		h.Env = host.MapEnv(env)
		h.Identity = rootUser
		h.Now = func() time.Time { return Created }
		return h, nil
	}}
}

// meminfo is a /proc/meminfo of a mostly idle machine with kib of RAM.
func meminfo(kib int64) []byte {
	var b strings.Builder
	line := func(k string, v int64) { fmt.Fprintf(&b, "%-16s%8d kB\n", k+":", v) }
	line("MemTotal", kib)
	line("MemFree", kib*9/10)
	line("MemAvailable", kib*93/100)
	line("Buffers", kib/400)
	line("Cached", kib/30)
	line("SwapCached", 0)
	line("SwapTotal", 0)
	line("SwapFree", 0)
	line("Shmem", kib/1000)
	return []byte(b.String())
}

func readFixture(fixtures, rel string) ([]byte, error) {
	b, err := os.ReadFile(fixturePath(fixtures, rel))
	if err != nil {
		return nil, fmt.Errorf("fixture: %w", err)
	}
	return b, nil
}

// Device-node modes as the NVIDIA driver creates them (world read/write).
const nvNode = fs.ModeDevice | fs.ModeCharDevice | 0o666

// pciFunction adds one PCI function the way sysfs shows it: a uevent, the
// separate id and link files, and the driver link.
func pciFunction(m fstest.MapFS, addr string, vendor, device, subVendor, subDevice uint16, class uint32, driver, speedCur, speedMax string, widthCur, widthMax int) {
	d := "sys/bus/pci/devices/" + addr + "/"
	set := func(name, v string) { m[d+name] = &fstest.MapFile{Data: []byte(v + "\n"), Mode: 0o444} }
	set("uevent", strings.TrimSuffix(fmt.Sprintf("DRIVER=%s\nPCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\nPCI_SLOT_NAME=%s\nMODALIAS=pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X",
		driver, class, vendor, device, subVendor, subDevice, addr, vendor, device, subVendor, subDevice, class>>16, (class>>8)&0xff, class&0xff), "\n"))
	set("vendor", fmt.Sprintf("0x%04x", vendor))
	set("device", fmt.Sprintf("0x%04x", device))
	set("subsystem_vendor", fmt.Sprintf("0x%04x", subVendor))
	set("subsystem_device", fmt.Sprintf("0x%04x", subDevice))
	set("class", fmt.Sprintf("0x%06x", class))
	set("current_link_speed", speedCur)
	set("max_link_speed", speedMax)
	set("current_link_width", fmt.Sprint(widthCur))
	set("max_link_width", fmt.Sprint(widthMax))
	set("numa_node", "0")
	m[d+"driver"] = &fstest.MapFile{Data: []byte("../../../bus/pci/drivers/" + driver), Mode: fs.ModeSymlink | 0o777}
}

// nvidiaH100 is a two-GPU H100 PCIe server answering through NVML. The
// NVML answer is the raw fixture as recorded; the kernel module file takes
// the real Ubuntu open-module file's format with the NVML driver version
// (550.90.07), since no public paste of that version's file was found; the
// PCI functions and device nodes follow the NVML answer (bus ids
// 0000:17:00.0 and 0000:18:00.0, device id 0x2331, Gen5 x8 of x16).
func nvidiaH100(fixtures string) (*host.Host, error) {
	raw, err := readFixture(fixtures, "nvidia/raw/h100-pcie-x2-full.json")
	if err != nil {
		return nil, err
	}
	ver, err := readFixture(fixtures, "nvidia/proc/open-565.57.01-ubuntu.txt")
	if err != nil {
		return nil, err
	}
	m := fstest.MapFS{
		"proc/driver/nvidia/version": {Data: []byte(strings.ReplaceAll(string(ver), "565.57.01", "550.90.07")), Mode: 0o444},
		"dev/nvidiactl":              {Mode: nvNode},
		"dev/nvidia0":                {Mode: nvNode},
		"dev/nvidia1":                {Mode: nvNode},
		"dev/nvidia-uvm":             {Mode: nvNode},
		"dev/nvidia-uvm-tools":       {Mode: nvNode},
	}
	for _, addr := range []string{"0000:17:00.0", "0000:18:00.0"} {
		pciFunction(m, addr, 0x10de, 0x2331, 0x10de, 0x1626, 0x030200, "nvidia", "32.0 GT/s PCIe", "32.0 GT/s PCIe", 8, 16)
	}
	return &host.Host{
		OS: "linux", Arch: "amd64", Hostname: "gpu-node-17",
		FS:       memFS{m},
		Env:      host.MapEnv{},
		Runner:   &fileRunner{fixtures: fixtures},
		Sysctl:   host.NoSysctl{},
		NVML:     fileNVML{raw},
		Identity: gpuUser,
		Now:      func() time.Time { return Created },
	}, nil
}

// nvidiaMismatch is the machine of a real bug report
// (zzzhouuu/truenas-nvidia-drivers#19): kernel module 580.173.02 loaded,
// user-space library 580.178 installed, so NVML init fails with
// ERROR_LIB_RM_VERSION_MISMATCH and nvidia-smi prints "Driver/library
// version mismatch". The report names no GPU model, so there is no PCI
// function; the library file is where a Debian-style install puts it.
func nvidiaMismatch(fixtures string) (*host.Host, error) {
	raw, err := readFixture(fixtures, "nvidia/raw/init-lib-rm-mismatch.json")
	if err != nil {
		return nil, err
	}
	ver, err := readFixture(fixtures, "nvidia/proc/proprietary-580.173.02-truenas.txt")
	if err != nil {
		return nil, err
	}
	const lib = "usr/lib/x86_64-linux-gnu/"
	m := fstest.MapFS{
		"proc/driver/nvidia/version":    {Data: ver, Mode: 0o444},
		"dev/nvidiactl":                 {Mode: nvNode},
		"dev/nvidia0":                   {Mode: nvNode},
		"dev/nvidia-uvm":                {Mode: nvNode},
		lib + "libnvidia-ml.so.580.178": {Mode: 0o644},
		lib + "libnvidia-ml.so.1":       {Data: []byte("libnvidia-ml.so.580.178"), Mode: fs.ModeSymlink | 0o777},
	}
	// nvidia-smi exits with the NVML return code (18, the mismatch).
	run := &fileRunner{
		fixtures: fixtures,
		answers:  map[string]answer{"nvidia-smi *": {file: "nvidia/smi/err-version-mismatch-580.txt", exit: 18}},
		paths:    map[string]string{"nvidia-smi": "/usr/bin/nvidia-smi"},
	}
	return &host.Host{
		OS: "linux", Arch: "amd64", Hostname: "truenas",
		FS:       memFS{m},
		Env:      host.MapEnv{},
		Runner:   run,
		Sysctl:   host.NoSysctl{},
		NVML:     fileNVML{raw},
		Identity: rootUser,
		Now:      func() time.Time { return Created },
	}, nil
}

// mac is a Mac answering sysctl and the allowlisted programs from recorded
// answers (testdata/accel/mac/). It has no file system devctl reads.
func mac(name, arch, sysctlFile string, extra map[string]string, programs map[string]answer) Machine {
	var files []string
	for _, a := range programs {
		files = append(files, "testdata/"+a.file)
	}
	sort.Strings(files)
	from := "testdata/" + sysctlFile + "; " + strings.Join(files, ", ")
	if len(extra) > 0 {
		from += " + synthetic sysctl " + strings.Join(slices.Sorted(maps.Keys(extra)), ", ")
	}
	return Machine{Name: name, Family: "mps", From: from, Build: func(fixtures string) (*host.Host, error) {
		b, err := readFixture(fixtures, sysctlFile)
		if err != nil {
			return nil, err
		}
		sys, err := ParseSysctlText(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sysctlFile, err)
		}
		for k, v := range extra {
			if _, ok := sys[k]; !ok {
				sys[k] = v
			}
		}
		paths := map[string]string{}
		for key := range programs {
			prog, _, _ := strings.Cut(key, " ")
			paths[prog] = "/usr/sbin/" + prog
		}
		return &host.Host{
			OS: "darwin", Arch: arch, Hostname: name + ".local",
			FS:       memFS{fstest.MapFS{}},
			Env:      host.MapEnv{},
			Runner:   &fileRunner{fixtures: fixtures, answers: programs, paths: paths},
			Sysctl:   mapSysctl(sys),
			Identity: macUser,
			Now:      func() time.Time { return Created },
		}, nil
	}}
}
