package recommend

import (
	"bytes"
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// countEXAONE4 counts Exaone4ForCausalLM (LG AI's EXAONE 4.0 1.2B and 32B,
// model_type exaone4) as transformers' modeling_exaone4.py builds it:
// grouped-query attention without biases and with per-head q/k RMSNorms
// (head_dim wide), a gated MLP, RMSNorms only after attention and after the
// MLP (no input norm), a final norm, and the head (untied unless
// tie_word_embeddings; EXAONE-4.0-1.2B ties it). Layers attend to a
// sliding_window or to everything by layer_types; without layer_types,
// Exaone4Config makes every sliding_window_pattern-th layer (4 by default)
// full, and a null window makes every layer full. EXAONE-4.0-1.2B counts
// 1,279,391,488 and EXAONE-4.0-32B 32,003,216,384, the Hub's counts.
func countEXAONE4(c hfConfig) (oomsim.Model, error) {
	d, ffn, err := readDecoder(c)
	if err != nil {
		return oomsim.Model{}, err
	}
	d.norms, d.qkNorm = 2, true
	d.tied = flag(c.TieWordEmbeddings, false)
	d.mlp, d.activeFFN = dense(d.h, ffn, false), ffn
	m := d.count()
	types := c.LayerTypes
	null := bytes.Equal(bytes.TrimSpace(c.SlidingWindow), []byte("null"))
	if len(types) == 0 && !null {
		pattern := windowPattern{every: 4}
		if c.SlidingWindowPattern != nil {
			pattern = *c.SlidingWindowPattern
		}
		for i := range int64(m.Arch.Layers) {
			global, ok := pattern.global(i)
			if !ok {
				return oomsim.Model{}, fmt.Errorf("sliding_window_pattern %d: want a positive period, a string of L and G, or layer_types", pattern.every)
			}
			if global {
				types = append(types, "full_attention")
			} else {
				types = append(types, "sliding_attention")
			}
		}
	}
	if len(types) == 0 {
		return m, nil // a null window: every layer full
	}
	if err := setSlidingLayers(&m, types, c.SlidingWindow, 4096); err != nil {
		return oomsim.Model{}, err
	}
	return m, nil
}
