package recommend

import (
	"encoding/json"
	"fmt"
	"strings"
)

// hfSliding holds what a config.json says of sliding-window attention:
// the window and the family's pattern (layer_types is hfConfig2026's). It is read leniently: some families write sliding_window as
// null, or beside a use_sliding_window switch.
type hfSliding struct {
	SlidingWindow        json.RawMessage `json:"sliding_window"`
	SlidingWindowPattern *windowPattern  `json:"sliding_window_pattern"`
}

// windowPattern is sliding_window_pattern: a period (Gemma 3's 6: every
// sixth layer global) or, in EXAONE 4's and Gemma 3n's docstrings, a
// string of L (local, sliding) and G (global) repeated over the layers
// ("LLLG").
type windowPattern struct {
	every   int64
	letters string
}

func (w *windowPattern) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		s = strings.ToUpper(strings.TrimSpace(s))
		if s == "" || strings.Trim(s, "LG") != "" || len(s) > 1024 {
			return fmt.Errorf("sliding_window_pattern %q: want a period or a string of L and G", s)
		}
		w.letters = s
		return nil
	}
	return json.Unmarshal(b, &w.every)
}

// global reports whether layer i (from 0) attends globally under the
// pattern; ok is false for a period below 1.
func (w windowPattern) global(i int64) (global, ok bool) {
	if w.letters != "" {
		return w.letters[i%int64(len(w.letters))] == 'G', true
	}
	if w.every < 1 {
		return false, false
	}
	return (i+1)%w.every == 0, true
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
		if p := c.SlidingWindowPattern; p != nil && p.letters != "" {
			for i := range int64(kvLayers) {
				if g, _ := p.global(i); !g {
					n++
				}
			}
			break
		} else if p != nil {
			pattern = p.every
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
