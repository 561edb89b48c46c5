package recommend

import (
	"bytes"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/recommend"
	"github.com/devctl/devctl/internal/report"
)

// Regression: the CPU fallback's plan was shown against the GPU's budget
// ("5.07 GiB of 0.90 GiB"); it is judged against host memory, and an
// inference plan's micro-batch reads as chunks, not accumulation.
func TestRecommendTableJudgesTheCPUFallbackAgainstHostMemory(t *testing.T) {
	cpuPlan := oomsim.Plan{Mode: oomsim.Inference, Precision: capability.FP32, BatchSize: 4, MicroBatch: 2, OnCPU: true}
	r := &recommend.Result{
		Device:         recommend.Target{Name: "cuda:0", Backend: "cuda", UsableBytes: 966367641, HostBytes: 16 << 30},
		MemoryStrategy: "aggressive", MemoryFraction: 0.9,
		Memory: recommend.Memory{Breakdown: oomsim.Breakdown{TotalBytes: 5 << 30}, UsableBytes: 966367641, StrategyBytes: 869730877},
		Plan:   oomsim.Plan{Mode: oomsim.Inference, Precision: capability.FP16, BatchSize: 4},
		Ladder: &oomsim.Trace{Fits: true, Final: cpuPlan, FinalMemory: oomsim.Breakdown{TotalBytes: 5 << 30},
			Steps: []oomsim.Step{{Action: "CPU fallback", Change: "run on the host CPU (fp32)", Plan: cpuPlan, Fits: true}}},
		HeadroomBytes: 966367641 - 5<<30,
	}
	var buf bytes.Buffer
	if err := Table(&buf, r, report.NewStyle(&buf, false)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "(5.00 GiB of 16.00 GiB of host memory)") {
		t.Errorf("the CPU plan is not judged against host memory:\n%s", out)
	}
	if !strings.Contains(out, "batch 4 in 2 chunks of 2") || strings.Contains(out, "accumulation") {
		t.Errorf("an inference plan reads as gradient accumulation:\n%s", out)
	}
}
