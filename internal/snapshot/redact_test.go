package snapshot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedactorReplacesIdentifiers(t *testing.T) {
	tests := []struct {
		name     string
		hostname string
		collect  string // text whose serials are collected first
		nvml     string
		in, want string
	}{
		{"a GPU UUID keeps its prefix", "", "", "",
			"GPU-4E3F2A1B-9C8D-4E7F-A6B5-C4D3E2F1A0B9", "GPU-00000000-0000-4000-8000-000000000001"},
		{"the same UUID in another case gets the same placeholder", "", "", "",
			"GPU-4e3f2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9 4E3F2A1B-9C8D-4E7F-A6B5-C4D3E2F1A0B9", "GPU-00000000-0000-4000-8000-000000000001 00000000-0000-4000-8000-000000000001"},
		{"old-style MIG names keep their instance ids", "", "", "",
			"MIG-GPU-4e3f2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9/1/0", "MIG-GPU-00000000-0000-4000-8000-000000000001/1/0"},
		{"a Serial Number line's value is replaced everywhere", "", "    Serial Number    : 1650321098765\n", "",
			"serial 1650321098765, again 1650321098765", "serial REDACTED-SERIAL-1, again REDACTED-SERIAL-1"},
		{"a serial glued into a longer token is left alone", "", "Serial Number: 16503\n", "",
			"x165034 16503", "x165034 REDACTED-SERIAL-1"},
		{"N/A and zero serials are not serials", "", "Serial Number: N/A\nserial=0000000000\n", "",
			"N/A 0000000000", "N/A 0000000000"},
		{"an NVML serial field is a serial", "", "", `{"gpus":[{"serial":"PF2XK9QA","name":"A100"}]}`,
			"board PF2XK9QA", "board REDACTED-SERIAL-1"},
		{"the hostname is replaced as a whole token only", "gpu", "", "",
			"gpu gpu.example.com gpus my-gpu", RedactedHostname + " " + RedactedHostname + ".example.com gpus my-gpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := newRedactor(true, tt.hostname)
			x.collectLines([]byte(tt.collect))
			if tt.nvml != "" {
				x.collectNVML([]byte(tt.nvml))
			}
			x.finish()
			if diff := cmp.Diff(tt.want, x.str(tt.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRedactorOffChangesNothing(t *testing.T) {
	x := newRedactor(false, "gpu")
	x.collectLines([]byte("Serial Number: 1234567\n"))
	x.finish()
	in := "gpu GPU-4e3f2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9 1234567"
	if got := x.str(in); got != in {
		t.Errorf("str(%q) = %q with redaction off", in, got)
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("Serial Number : 123456\nGPU-4e3f2a1b-9c8d-4e7f-a6b5-c4d3e2f1a0b9 host", `{"serial":"ABCDEF"}`)
	f.Fuzz(func(t *testing.T, text, nvml string) {
		x := newRedactor(true, "host")
		x.collectFile("/sys/x/serial", []byte(text))
		x.collectNVML([]byte(nvml))
		x.finish()
		a := x.str(text)
		if b := x.str(text); a != b {
			t.Fatalf("redaction is not stable: %q then %q", a, b)
		}
	})
}
