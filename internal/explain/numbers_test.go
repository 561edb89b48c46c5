package explain

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int64
		ok   bool
	}{
		{"mebibytes with decimals", "20.00 MiB", 20 << 20, true},
		{"gibibytes", "14.75 GiB", 15837691904, true},
		{"kibibytes", "576.00 KiB", 576 << 10, true},
		{"a zero in words", "0 bytes", 0, true},
		{"plain bytes", "7406166528 bytes", 7406166528, true},
		{"MPS prints GB for GiB", "18.13 GB", 19466939269, true},
		{"XLA prints G without B", "6.48G", 6957847020, true},
		{"XLA prints K", "4.0K", 4096, true},
		{"a bare number is bytes", "12582912", 12582912, true},
		{"a B suffix", "0B", 0, true},
		{"a unit glued to the number", "100MiB", 100 << 20, true},
		{"an unknown unit is rejected", "3 furlongs", 0, false},
		{"no number is rejected", "MiB", 0, false},
		{"a number too large for int64 is rejected", "99999999999999 PiB", 0, false},
		{"two dots are rejected", "1.2.3 MiB", 0, false},
		{"empty is rejected", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseSize(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("parseSize(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestCUDAVersionFromInt(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"11040", "11.4", true},
		{"10010", "10.1", true},
		{"6050", "6.5", true},
		{"12020", "12.2", true},
		{"0", "", false},
		{"x", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := cudaVersionFromInt(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("cudaVersionFromInt(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func i64(v int64) *int64  { return &v }
func ip(v int) *int       { return &v }
func sp(v string) *string { return &v }

// Each case is one number-reading format, quoted from the corpus.
func TestReadNumbers(t *testing.T) {
	tests := []struct {
		name string
		log  string
		want Numbers
	}{
		{"PyTorch 2.1+ CUDA OOM with total, free and allocator split",
			"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 14.75 GiB of which 3.06 MiB is free. Including non-PyTorch memory, this process has 14.74 GiB memory in use. Of the allocated memory 13.90 GiB is allocated by PyTorch, and 700.00 MiB is reserved by PyTorch but unallocated.",
			Numbers{RequestedBytes: i64(20 << 20), DeviceIndex: ip(0), TotalBytes: i64(15837691904), FreeBytes: i64(3208643),
				AllocatedBytes: i64(14925011354), ReservedBytes: i64(14925011354 + 700<<20)}},
		{"PyTorch before 2.1 with reserved in total",
			"RuntimeError: CUDA out of memory. Tried to allocate 1.65 GiB (GPU 1; 7.79 GiB total capacity; 3.53 GiB already allocated; 1.40 GiB free; 5.28 GiB reserved in total by PyTorch)",
			Numbers{RequestedBytes: i64(1771674010), DeviceIndex: ip(1), TotalBytes: i64(8364448809), AllocatedBytes: i64(3790308639),
				FreeBytes: i64(1503238554), ReservedBytes: i64(5669356831)}},
		{"old PyTorch with cached instead of reserved",
			"RuntimeError: CUDA out of memory. Tried to allocate 1024.00 KiB (GPU 0; 11.17 GiB total capacity; 10.90 GiB already allocated; 576.00 KiB free; 30.96 MiB cached)",
			Numbers{RequestedBytes: i64(1 << 20), DeviceIndex: ip(0), TotalBytes: i64(11993696174), AllocatedBytes: i64(11703785882),
				FreeBytes: i64(576 << 10), ReservedBytes: i64(32463913)}},
		{"MPS out of memory",
			"RuntimeError: MPS backend out of memory (MPS allocated: 11.14 GB, other allocations: 6.65 GB, max allowed: 18.13 GB). Tried to allocate 375.40 MB on private pool.",
			Numbers{AllocatedBytes: i64(11961483919), OtherBytes: i64(7140383130), TotalBytes: i64(19466939269), RequestedBytes: i64(393635430)}},
		{"XLA bytes",
			"XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.",
			Numbers{RequestedBytes: i64(7406166528)}},
		{"TPU reservation",
			"RESOURCE_EXHAUSTED: Attempting to reserve 6.48G at the bottom of memory. That was not possible. There are 6.78G free, 0B reserved, and 3.33G reservable.",
			Numbers{RequestedBytes: i64(6957847020), FreeBytes: i64(7279969567)}},
		{"TPU HBM exceeded",
			"RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 29.80G of 7.98G hbm. Exceeded hbm capacity by 21.82G.",
			Numbers{RequestedBytes: i64(31997506355), TotalBytes: i64(8568459756)}},
		{"TensorFlow BFC stats",
			"Limit:                 10625279591\nInUse:                  7350513920\nResourceExhaustedError: OOM when allocating tensor with shape[1]",
			Numbers{TotalBytes: i64(10625279591), AllocatedBytes: i64(7350513920)}},
		{"driver too old with nvidia-smi header",
			"RuntimeError: The NVIDIA driver on your system is too old (found version 11040).\n| NVIDIA-SMI 470.86       Driver Version: 470.86       CUDA Version: 11.4",
			Numbers{DriverCUDAVersion: sp("11.4"), DriverVersion: sp("470.86")}},
		{"NVML library version",
			"Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.144",
			Numbers{DriverVersion: sp("550.144")}},
		{"CUDA runtime error code",
			"RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version",
			Numbers{ErrorCode: ip(35)}},
		{"THCudaCheck error code",
			"THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=265 error=77 : an illegal memory access was encountered",
			Numbers{ErrorCode: ip(77)}},
		{"MPS operator",
			"NotImplementedError: The operator 'aten::_slow_conv2d_forward' is not currently implemented for the MPS device.",
			Numbers{Operator: sp("aten::_slow_conv2d_forward")}},
		{"CPU half kernel",
			`RuntimeError: "addmm_impl_cpu_" not implemented for 'Half'`,
			Numbers{Operator: sp("addmm_impl_cpu_"), DType: sp("Half")}},
		{"device mismatch devices",
			"RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
			Numbers{Devices: []string{"cuda:0", "cpu"}}},
		{"scalar types",
			"RuntimeError: expected scalar type Half but found Float",
			Numbers{DType: sp("Half/Float")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify([]byte(tt.log)).Numbers
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Numbers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNumbersVars(t *testing.T) {
	n := Numbers{RequestedBytes: i64(20 << 20), FreeBytes: i64(3208643), TotalBytes: i64(15837691904), DeviceIndex: ip(0),
		DriverCUDAVersion: sp("11.4"), Devices: []string{"cuda:0", "cpu"}}
	want := map[string]string{"requested": "20.0 MiB", "free": "3.1 MiB", "total": "14.75 GiB", "device_index": "0",
		"driver_cuda_version": "11.4", "devices": "cuda:0, cpu",
		// A CUDA 11.4 driver is offered the newest build not newer than it.
		"torch_install": "pip install torch==1.12.1+cu113 --extra-index-url https://download.pytorch.org/whl/cu113"}
	if diff := cmp.Diff(want, n.Vars()); diff != "" {
		t.Errorf("Vars (-want +got):\n%s", diff)
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"20.00 MiB", "0 bytes", "6.48G", "1e309 GiB", ".", "9999999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, ok := parseSize(s); ok && v < 0 {
			t.Errorf("parseSize(%q) = %d, a negative size", s, v)
		}
	})
}

func TestLiteralPrefix(t *testing.T) {
	for pat, want := range map[string]string{
		`Tried to allocate (\d+)`:  "Tried to allocate ",
		`(?:cuda runtime error|x)`: "",
		`found version (\d+)`:      "found version ",
		`plain`:                    "plain",
		`MPS allocated: ` + sizeRE: "MPS allocated: ",
	} {
		if got := literalPrefix(pat); got != want {
			t.Errorf("literalPrefix(%q) = %q, want %q", pat, got, want)
		}
	}
}
