package nvidia

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAnswerJSONRoundTrip(t *testing.T) {
	in := Raw{
		Version:           RawVersion,
		Source:            SourceNVML,
		DriverVersion:     Ok("550.90.07"),
		CUDADriverVersion: Ok(12040),
		GPUs: []GPU{{
			Index:        0,
			PowerUsageMW: Fail[uint32](ErrNotSupported),
			MIGMode:      Ok(ModePair{Current: 0, Pending: 1}),
			Processes:    Ok([]Process{}),
		}},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&in, out); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	var probe map[string]any
	_ = json.Unmarshal(b, &probe)
	power := probe["gpus"].([]any)[0].(map[string]any)["power_usage_mw"]
	if diff := cmp.Diff(map[string]any{"ret": 3.0, "error": "ERROR_NOT_SUPPORTED"}, power); diff != "" {
		t.Errorf("a failed answer is written with its name (-want +got):\n%s", diff)
	}
}

func TestDecodeRejectsGarbage(t *testing.T) {
	for name, in := range map[string]string{"empty": "", "not JSON": "{", "wrong type": `{"gpus": 3}`} {
		t.Run(name, func(t *testing.T) {
			if _, err := Decode([]byte(in)); err == nil {
				t.Error("want an error")
			}
		})
	}
}

func TestDecodeRefusesAnswersNVMLCannotGive(t *testing.T) {
	const head = `{"version": 1, "source": "nvml", "init_ret": 0, "device_count": {"value": 2, "ret": 0}, `
	for name, in := range map[string]string{
		"a duplicate index":          head + `"gpus": [{"index": 0}, {"index": 0}]}`,
		"a negative index":           head + `"gpus": [{"index": -1}]}`,
		"an index past the count":    head + `"gpus": [{"index": 0}, {"index": 2}]}`,
		"a negative count":           `{"init_ret": 0, "device_count": {"value": -1, "ret": 0}, "gpus": []}`,
		"a pair naming a GPU absent": head + `"gpus": [{"index": 0}], "p2p": [{"a": 0, "b": 1}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			if r, err := Decode([]byte(in)); err == nil {
				t.Errorf("decoded %+v; want an error", r.GPUs)
			}
		})
	}
	if _, err := Decode([]byte(head + `"gpus": [{"index": 1}, {"index": 0}]}`)); err != nil {
		t.Errorf("two distinct indexes in any order: %v", err)
	}
}

func TestDecodeIgnoresUnknownFields(t *testing.T) {
	r, err := Decode([]byte(`{"version": 9, "source": "nvml", "init_ret": 0, "future": true, "gpus": [], "device_count": {"value": 0, "ret": 0}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Usable() || r.Version != RawVersion {
		t.Errorf("decoded %+v", r)
	}
}

func TestReturnNames(t *testing.T) {
	tests := []struct {
		code        Return
		wantName    string
		wantMeaning string
	}{
		{Success, "SUCCESS", "the call succeeded"},
		{ErrNotSupported, "ERROR_NOT_SUPPORTED", "this GPU or driver does not support the query"},
		{ErrLibraryNotFound, "ERROR_LIBRARY_NOT_FOUND", "the NVML library (libnvidia-ml.so.1) was not found: the driver's user-space part is not installed or not on the library path"},
		{ErrLibRMVersionMismatch, "ERROR_LIB_RM_VERSION_MISMATCH", "the NVML library and the kernel module are different versions: reboot, or reload the nvidia modules"},
		{ErrUnknown, "ERROR_UNKNOWN", "an unknown error; inside a container this often means the container lost access to the GPU"},
		{4242, "ERROR_4242", "NVML return code 4242"},
	}
	for _, tt := range tests {
		if got := tt.code.Name(); got != tt.wantName {
			t.Errorf("Return(%d).Name() = %q, want %q", int(tt.code), got, tt.wantName)
		}
		if got := tt.code.Meaning(); got != tt.wantMeaning {
			t.Errorf("Return(%d).Meaning() = %q, want %q", int(tt.code), got, tt.wantMeaning)
		}
	}
}

func TestArchitectureAndVersions(t *testing.T) {
	cc := []struct {
		major, minor int
		want         string
	}{
		{7, 0, "Volta"}, {7, 2, "Volta"}, {7, 5, "Turing"}, {8, 0, "Ampere"}, {8, 6, "Ampere"}, {8, 7, "Ampere"},
		{8, 9, "Ada"}, {9, 0, "Hopper"}, {10, 0, "Blackwell"}, {12, 0, "Blackwell"}, {12, 1, "Blackwell"}, {6, 1, "Pascal"}, {99, 0, ""},
	}
	for _, c := range cc {
		if got := ArchitectureFromCC(c.major, c.minor); got != c.want {
			t.Errorf("ArchitectureFromCC(%d.%d) = %q, want %q", c.major, c.minor, got, c.want)
		}
	}
	for v, want := range map[int]string{12040: "12.4", 11000: "11.0", 13000: "13.0", 12090: "12.9", 0: ""} {
		if got := CUDAVersionString(v); got != want {
			t.Errorf("CUDAVersionString(%d) = %q, want %q", v, got, want)
		}
	}
	if diff := cmp.Diff([]string{"sw_power_cap", "hw_thermal_slowdown", "0x2000"}, ClocksEventReasonNames(0x4|0x40|0x2000)); diff != "" {
		t.Errorf("clock reasons (-want +got):\n%s", diff)
	}
}
