package recommend

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// countOLMo3 counts Olmo3ForCausalLM (OLMo 3 7B and 32B, model_type olmo3)
// as transformers' modeling_olmo3.py builds it: OLMo 2's block (countNormVariant
// "olmo2": RMSNorms after attention and after the MLP, RMSNorms over the
// whole q and k projections, biases with attention_bias) whose layers
// attend either to a sliding_window of the last tokens or to all of them,
// by layer_types. Without layer_types, Olmo3Config makes every fourth
// layer full attention and the rest sliding; without sliding_window its
// window is 4096, and a null window makes every layer full. OLMo 3 7B
// counts 7,298,011,136 and OLMo 3 32B 32,233,522,176, the Hub's counts.
func countOLMo3(c hfConfig) (oomsim.Model, error) {
	m, err := countNormVariant(c, "olmo2")
	if err != nil {
		return m, err
	}
	types := c.LayerTypes
	if len(types) == 0 {
		for i := range m.Arch.Layers {
			if (i+1)%4 != 0 {
				types = append(types, "sliding_attention")
			} else {
				types = append(types, "full_attention")
			}
		}
	}
	if err := setSlidingLayers(&m, types, c.SlidingWindow, 4096); err != nil {
		return oomsim.Model{}, err
	}
	return m, nil
}

// setSlidingLayers sets the Arch's sliding layers from one layer type per
// layer ("sliding_attention" or "full_attention") and the window, raw from
// the file: def when absent, none when null.
func setSlidingLayers(m *oomsim.Model, types []string, rawWindow json.RawMessage, def int64) error {
	if len(types) != m.Arch.Layers {
		return fmt.Errorf("layer_types has %d entries for %d layers", len(types), m.Arch.Layers)
	}
	sliding := 0
	for _, t := range types {
		switch t {
		case "sliding_attention":
			sliding++
		case "full_attention":
		default:
			return fmt.Errorf("layer_types has %q: want sliding_attention or full_attention", t)
		}
	}
	window := def
	if raw := bytes.TrimSpace(rawWindow); len(raw) > 0 {
		if bytes.Equal(raw, []byte("null")) {
			window = 0
		} else if err := json.Unmarshal(raw, &window); err != nil || window <= 0 || window > maxDim {
			return fmt.Errorf("sliding_window is %s: want a positive number of tokens or null", raw)
		}
	}
	if window > 0 && sliding > 0 {
		m.Arch.SlidingWindow, m.Arch.SlidingLayers = int(window), sliding
	}
	return nil
}
