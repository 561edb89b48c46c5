package recommend

import (
	"encoding/json"
	"fmt"
)

// layerFreq is moe_layer_freq: a step (DeepSeek-V2/V3: every step-th block
// after the first_k_dense_replace dense ones is a mixture of experts) or,
// in MiMo-V2-Flash, one 0 or 1 per block (1: a mixture).
type layerFreq struct {
	every    *int64
	perBlock []int64
}

func (l *layerFreq) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &l.every); err == nil {
		return nil
	}
	if err := json.Unmarshal(b, &l.perBlock); err != nil || len(l.perBlock) > maxLayers {
		return fmt.Errorf("moe_layer_freq is %.40s: want a number or a list of 0 and 1 per block", b)
	}
	for _, v := range l.perBlock {
		if v != 0 && v != 1 {
			return fmt.Errorf("moe_layer_freq lists %d: want 0 (dense) or 1 (a mixture of experts) per block", v)
		}
	}
	return nil
}

// step is the number form, for the families that read it; a per-block
// list there is refused through f.
func (l layerFreq) step(f *fields) *int64 {
	if l.perBlock != nil && f.err == nil {
		f.err = fmt.Errorf("moe_layer_freq is a list of %d blocks: this family takes a number", len(l.perBlock))
	}
	return l.every
}
