package recommend

import (
	"encoding/json"
)

// hfSliding holds what a config.json says of sliding-window attention:
// the window and the family's pattern (layer_types is hfConfig2026's). It is read leniently: some families write sliding_window as
// null, or beside a use_sliding_window switch.
type hfSliding struct {
	SlidingWindow        json.RawMessage `json:"sliding_window"`
	SlidingWindowPattern *int64          `json:"sliding_window_pattern"`
}

// slidingLayers is the window and how many of the KV layers attend only to
// it (their KV cache can be held to the window):
//
//   - layer_types, where the config lists them (gpt-oss, Gemma 3 from
//     transformers 4.53, Gemma 2 and Cohere2 in newer exports): the
//     "sliding_attention" layers;
//   - else the family's pattern: Gemma 2 alternates, its even layers
//     sliding (Gemma2DecoderLayer: is_sliding = not layer_idx % 2); Gemma 3
//     and Cohere2 make every sliding_window_pattern-th layer global (6 and
//     4 by default).
//
// Other families (Mistral 7B v0.1, Qwen2, Phi-3) name a window that their
// KV caches do not honour layer by layer: no sliding layers.
func slidingLayers(c hfSliding, layerTypes []string, family string, kvLayers int) (window, layers int) {
	var w int64
	if err := json.Unmarshal(c.SlidingWindow, &w); err != nil || w <= 0 || w > maxDim {
		return 0, 0
	}
	n := 0
	switch {
	case len(layerTypes) > 0:
		if len(layerTypes) != kvLayers {
			return 0, 0
		}
		for _, k := range layerTypes {
			if k == "sliding_attention" {
				n++
			}
		}
	case family == "gemma2":
		n = (kvLayers + 1) / 2
	case family == "gemma3_text" || family == "gemma3" || family == "cohere2":
		pattern := int64(6)
		if family == "cohere2" {
			pattern = 4
		}
		if c.SlidingWindowPattern != nil {
			pattern = *c.SlidingWindowPattern
		}
		if pattern < 1 || pattern > int64(kvLayers) {
			return 0, 0
		}
		n = kvLayers - kvLayers/int(pattern)
	}
	if n == 0 {
		return 0, 0
	}
	return int(w), n
}
