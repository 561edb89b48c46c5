package recommend

import "testing"

// The sliding-window layers of real configs: Gemma 2 alternates (layer 0
// sliding), Gemma 3 makes every sixth layer global (its layer_types list
// says so too), gpt-oss alternates by layer_types; Mistral 7B v0.1 names a
// window its caches do not hold per layer, and Llama 3 has none.
func TestSlidingWindowLayersFromRealConfigs(t *testing.T) {
	for _, c := range []struct {
		file           string
		window, layers int
	}{
		{"gemma-2-9b.config.json", 4096, 21},
		{"gemma-3-12b.config.json", 1024, 40},
		{"gpt-oss-20b.config.json", 128, 12},
		{"mistral-7b-v0.1.config.json", 0, 0},
		{"llama-3.1-70b.config.json", 0, 0},
	} {
		m, err := ParseHFConfig(readModel(t, c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if m.Arch.SlidingWindow != c.window || m.Arch.SlidingLayers != c.layers {
			t.Errorf("%s: window %d over %d layers, want %d over %d", c.file, m.Arch.SlidingWindow, m.Arch.SlidingLayers, c.window, c.layers)
		}
	}
}

// A sliding_window written as null, as a switch's companion, or out of
// range is no window; a layer_types list of the wrong length is ignored.
func TestSlidingWindowIsReadLeniently(t *testing.T) {
	for _, cfg := range []string{
		`{"model_type":"gemma2","hidden_size":8,"num_hidden_layers":2,"num_attention_heads":2,"num_key_value_heads":1,"head_dim":4,"intermediate_size":16,"vocab_size":10,"sliding_window":null}`,
		`{"model_type":"gemma2","hidden_size":8,"num_hidden_layers":2,"num_attention_heads":2,"num_key_value_heads":1,"head_dim":4,"intermediate_size":16,"vocab_size":10,"sliding_window":true}`,
		`{"model_type":"gemma2","hidden_size":8,"num_hidden_layers":2,"num_attention_heads":2,"num_key_value_heads":1,"head_dim":4,"intermediate_size":16,"vocab_size":10,"sliding_window":-5}`,
		`{"model_type":"gemma2","hidden_size":8,"num_hidden_layers":2,"num_attention_heads":2,"num_key_value_heads":1,"head_dim":4,"intermediate_size":16,"vocab_size":10,"sliding_window":4,"layer_types":["sliding_attention"]}`,
	} {
		m, err := ParseHFConfig([]byte(cfg))
		if err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		if m.Arch.SlidingLayers != 0 {
			t.Errorf("%s: %d sliding layers, want none", cfg, m.Arch.SlidingLayers)
		}
	}
}
