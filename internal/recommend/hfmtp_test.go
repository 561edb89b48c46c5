package recommend

import (
	"math"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/oomsim"
)

// --speculative mtp loads the checkpoint's multi-token-prediction layer
// beside the model: GLM-5's is exactly 9,952,920,576 parameters (the Hub's
// count less devctl's), Qwen3.5-35B-A3B's 844,640,768
// (testdata/models/README.md); devctl's block at the model's mean comes
// within 5% of each. A model without such layers is refused.
func TestSpeculativeMTPLayers(t *testing.T) {
	for _, c := range []struct {
		file  string
		exact float64
	}{
		{"glm-5.config.json", 9_952_920_576},
		{"qwen3.5-35b-a3b.config.json", 844_640_768},
	} {
		m, err := ParseHFConfig(readModel(t, c.file))
		if err != nil || m.MTPLayers != 1 {
			t.Fatalf("%s: %d MTP layers, %v", c.file, m.MTPLayers, err)
		}
		p := oomsim.Plan{Model: m, Mode: oomsim.Inference, Precision: "bf16", SeqLen: 1024, BatchSize: 1}
		base, _ := oomsim.Estimate(p)
		p.Speculative = oomsim.SpeculativeMTP
		spec, err := oomsim.Estimate(p)
		if err != nil {
			t.Fatal(err)
		}
		extra := float64(spec.WeightsBytes-base.WeightsBytes) / 2
		if math.Abs(extra-c.exact)/c.exact > 0.05 {
			t.Errorf("%s: %g more parameters, want within 5%% of %g", c.file, extra, c.exact)
		}
		if spec.KVCacheBytes <= base.KVCacheBytes {
			t.Errorf("%s: the draft layer's KV cache is missing (%d vs %d)", c.file, spec.KVCacheBytes, base.KVCacheBytes)
		}
		if !strings.Contains(strings.Join(spec.Notes, "\n"), "multi-token-prediction") {
			t.Errorf("%s: no note of the draft", c.file)
		}
	}
	llama, err := ParseHFConfig(readModel(t, "llama-2-7b.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oomsim.Estimate(oomsim.Plan{Model: llama, Mode: oomsim.Inference, Precision: "bf16", SeqLen: 1, BatchSize: 1, Speculative: oomsim.SpeculativeMTP}); err == nil {
		t.Error("a model without MTP layers accepted --speculative mtp")
	}
}
