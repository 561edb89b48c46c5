package selftest

import (
	"strings"
	"testing"
)

func FuzzCollector(f *testing.F) {
	f.Add([]byte(Marker+`{"ev":"start"}`+"\n"+Marker+`{"ev":"device","device":"cuda:0","precisions":["fp16"]}`+"\n"+Marker+`{"ev":"op_begin","device":"cuda:0","op":"matmul"}`), "timeout")
	f.Add([]byte("garbage\n"+Marker+"{\n"+Marker+`{"ev":"op","ok":false,"error":"CUDA out of memory"}`), "")
	f.Fuzz(func(t *testing.T, out []byte, killed string) {
		c := newCollector("torch")
		for _, l := range strings.Split(string(out), "\n") {
			c.Line([]byte(l))
		}
		fw := c.Finish(ended{Killed: killed, Reaped: true, Exit: "exit 0", Stderr: string(out)})
		if fw.Status == "" || fw.Detail == "" {
			t.Fatalf("no verdict: %+v", fw)
		}
		if len(fw.Devices) > maxDevices || len(fw.Notes) > maxNotes {
			t.Fatalf("unbounded: %d devices, %d notes", len(fw.Devices), len(fw.Notes))
		}
	})
}

func TestCollectorKeepsEarlierResultsOfACutOffChild(t *testing.T) {
	c := newCollector("jax")
	for _, l := range []string{
		Marker + `{"ev":"start","python":"3.12.1"}`,
		Marker + `{"ev":"import_begin"}`,
		Marker + `{"ev":"import_ms","ms":2100}`,
		Marker + `{"ev":"import","version":"0.4.35"}`,
		Marker + `{"ev":"device","device":"cuda:0","backend":"cuda","precisions":["fp32","bf16"]}`,
		Marker + `{"ev":"op_begin","device":"cuda:0","op":"allocate","precision":"fp32"}`,
		Marker + `{"ev":"op","device":"cuda:0","op":"allocate","precision":"fp32","ok":true,"ms":1.5}`,
		Marker + `{"ev":"op_begin","device":"cuda:0","op":"copy_h2d","precision":"fp32"}`,
		"2024-01-01 XLA warning printed on stdout",
	} {
		c.Line([]byte(l))
	}
	fw := c.Finish(ended{Killed: killedTimeout, Reaped: false, Timeout: "10s"})
	if fw.Status != Timeout || fw.Version != "0.4.35" || len(fw.Devices) != 1 {
		t.Fatalf("got %+v", fw)
	}
	ops := fw.Devices[0].Ops
	if len(ops) != 2 || ops[0].Status != OpOK || ops[1].Status != OpUnfinished || ops[1].Name != OpCopyH2D {
		t.Errorf("ops %+v: want allocate ok, copy_h2d unfinished", ops)
	}
	if !strings.Contains(fw.Exit, "stuck in the kernel") {
		t.Errorf("exit %q does not say the process could not be reaped", fw.Exit)
	}
}

// The history names round-trip, and names the self-test did not write
// are refused.
func TestHistoryOperationNames(t *testing.T) {
	for _, tc := range []struct{ fw, op, prec, name string }{
		{"torch", OpMatmul, "bf16", "torch.matmul_bf16"},
		{"jax", OpLayerNorm, "fp32", "jax.layernorm_fp32"},
		{"torch", OpCopyH2D, "fp16", "torch.copy_h2d"},
		{"tensorflow", OpAllocate, "", "tensorflow.allocate"},
	} {
		name := HistoryOperation(tc.fw, tc.op, tc.prec)
		if name != tc.name {
			t.Errorf("HistoryOperation(%q, %q, %q) = %q, want %q", tc.fw, tc.op, tc.prec, name, tc.name)
		}
		fw, op, prec, ok := ParseHistoryOperation(name)
		wantPrec := tc.prec
		if untyped(tc.op) {
			wantPrec = ""
		}
		if !ok || fw != tc.fw || op != tc.op || prec != wantPrec {
			t.Errorf("ParseHistoryOperation(%q) = %q, %q, %q, %v", name, fw, op, prec, ok)
		}
	}
	for _, bad := range []string{"", "matmul_bf16", "torch.", "torch.matmul", "torch.matmul_", "torch.sparse_mm", "model_loading", "torch.allocate_fp16"} {
		if _, _, _, ok := ParseHistoryOperation(bad); ok {
			t.Errorf("ParseHistoryOperation(%q) accepted", bad)
		}
	}
}
