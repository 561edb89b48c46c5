package doctor

import (
	"testing"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/recommend"
)

// Regression: recommend and doctor --log's OOM plan disagreed on one model
// and card (77.49 GiB "does not fit" against 77.8 GiB "fits") because each
// had its own budget. Both now compare against what the framework can
// allocate (the log's total capacity; the catalogue's usable memory), with
// the runtime overhead counted once, and run the same ladder.
func TestOOMPlanAgreesWithRecommend(t *testing.T) {
	log := []byte("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 172.00 MiB (GPU 0; 79.15 GiB total capacity; 77.98 GiB already allocated; 101.56 MiB free; 78.04 GiB reserved in total by PyTorch)")
	e := explain.Classify(log)
	if e.Numbers.TotalBytes == nil {
		t.Fatalf("the log's total capacity was not read: %+v", e.Numbers)
	}
	devs, err := recommend.LoadDevices(configs.DevicesYAML)
	if err != nil {
		t.Fatal(err)
	}
	a100, _ := recommend.FindDevice(devs, "a100-80gb")
	for _, params := range []int64{7_000_000_000, 13_000_000_000, 30_000_000_000} {
		plan, err := PlanOOM(e, &Env{}, OOMOptions{Params: params, Mode: oomsim.Training, Precision: capability.BF16, Fraction: 1})
		if err != nil {
			t.Fatal(err)
		}
		r, err := recommend.Recommend(recommend.Input{Model: oomsim.Model{Params: params}, Precision: capability.BF16, PrecisionSource: "test", Target: recommend.TargetFromCatalogue(a100, 1), Strategy: "auto", RunSettings: recommend.RunSettings{Mode: oomsim.Training}})
		if err != nil {
			t.Fatal(err)
		}
		if plan.BudgetBytes != r.Memory.UsableBytes {
			t.Errorf("%d params: doctor's budget %d, recommend's %d", params, plan.BudgetBytes, r.Memory.UsableBytes)
		}
		final, fits := r.Plan, r.Fits
		if r.Ladder != nil {
			final, fits = r.Ladder.Final, r.Ladder.Fits
		}
		if plan.Fits != fits || plan.Plan.Mode != final.Mode || plan.Plan.Optimizer != final.Optimizer || plan.Plan.Recompute != final.Recompute {
			t.Errorf("%d params: doctor ends at %s/%s/%s fits %v, recommend at %s/%s/%s fits %v", params,
				plan.Plan.Mode, plan.Plan.Optimizer, plan.Plan.Recompute, plan.Fits, final.Mode, final.Optimizer, final.Recompute, fits)
		}
	}
}

// Regression: the doctor's ladder never reached its CPU rung because it
// had no host budget; the probe's host memory is it.
func TestOOMPlanReachesTheCPUFallback(t *testing.T) {
	e := explain.Classify([]byte("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.75 GiB total capacity; 14.50 GiB already allocated; 1.06 MiB free; 14.60 GiB reserved in total by PyTorch)"))
	mem := int64(4 << 20) // 4 TiB of host memory, in MiB
	env := &Env{Report: &probe.Report{Host: probe.HostInfo{MemoryTotalMB: &mem}}}
	plan, err := PlanOOM(e, env, OOMOptions{Params: 30_000_000_000, Mode: oomsim.Training, Fraction: 1, Fallback: true})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Fits || !plan.Plan.OnCPU {
		t.Errorf("30B training on a 14.75 GiB card with 4 TiB of host memory: fits %v on the CPU %v, changes %q", plan.Fits, plan.Plan.OnCPU, plan.Changes)
	}
}
