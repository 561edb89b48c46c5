package bench

import (
	"runtime"
	"testing"
)

func TestEveryKernelThisCPUHasComputesTheReferenceValues(t *testing.T) {
	ran := 0
	for _, s := range Specs {
		k, ok := kernelFor(s.ID)
		if !ok {
			t.Logf("%s: not available on this CPU", s.ID)
			continue
		}
		ran++
		if err := k.Check(); err != nil {
			t.Errorf("%s: %v", s.ID, err)
		}
		k.Run(100) // the timing inputs must run too
	}
	if ran < 2 {
		t.Fatalf("only %d kernels ran on %s", ran, runtime.GOARCH)
	}
}
