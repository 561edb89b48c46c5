package recommend

import (
	"strings"
	"testing"
)

// Phi-3.5-vision-instruct: the Phi-3-mini language model (3,821,079,552)
// and the image embedding (CLIP ViT-L/14-336 303,507,456; separators
// 8,192; projection 22,026,240), 4,146,621,440 in all, the Hub's count
// (testdata/models/README.md).
func TestParseHFConfigPhi3V(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "phi-3.5-vision-instruct.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "phi3_v" || m.Params != 4_146_621_440 || m.VisionParams != 325_541_888 {
		t.Errorf("%s: %d params (vision %d), want phi3_v 4,146,621,440 (325,541,888)", m.Family, m.Params, m.VisionParams)
	}
	a := m.Arch
	if a == nil || a.Layers != 32 || a.KVLayers != 32 || a.Heads != 32 || a.KVHeads != 32 || a.HeadDim != 96 || a.SlidingLayers != 0 || a.Vocab != 32064 {
		t.Errorf("arch %+v, want 32 layers of 32 heads (32 KV, head 96), no sliding layers, vocabulary 32064", a)
	}
}

func TestParseHFConfigPhi3VBadInput(t *testing.T) {
	const text = `"model_type": "phi3_v", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100`
	const emb = `"embd_layer": {"embedding_cls": "image", "projection_cls": "mlp", "use_hd_transform": true, "with_learnable_separator": true}`
	for _, c := range []struct{ json, want string }{
		{`{` + text + `, ` + emb + `}`, "img_processor"},
		{`{` + text + `, ` + emb + `, "img_processor": {"name": "siglip", "model_name": "openai/clip-vit-large-patch14-336", "image_dim_out": 1024}}`, "clip_vision_model"},
		{`{` + text + `, ` + emb + `, "img_processor": {"name": "clip_vision_model", "model_name": "openai/clip-vit-base-patch16", "image_dim_out": 1024}}`, "model_name"},
		{`{` + text + `, ` + emb + `, "img_processor": {"name": "clip_vision_model", "model_name": "openai/clip-vit-large-patch14-336"}}`, "image_dim_out"},
		{`{` + text + `, ` + emb + `, "img_processor": {"name": "clip_vision_model", "model_name": "openai/clip-vit-large-patch14-336", "image_dim_out": -1}}`, "image_dim_out"},
		{`{` + text + `, "embd_layer": {"use_hd_transform": true}, "img_processor": {"name": "clip_vision_model", "model_name": "openai/clip-vit-large-patch14-336", "image_dim_out": 1024}}`, "with_learnable_separator"},
		{`{` + text + `, "embd_layer": {"projection_cls": "conv"}, "img_processor": {"name": "clip_vision_model", "model_name": "openai/clip-vit-large-patch14-336", "image_dim_out": 1024}}`, "projection_cls"},
		{`{"model_type": "phi3_v", ` + emb + `}`, "hidden_size"},
	} {
		_, err := ParseHFConfig([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), "phi3_v config.json") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming phi3_v and %s", c.json, err, c.want)
		}
	}
	// No embd_layer: the language model alone, said in the notes.
	m, err := ParseHFConfig([]byte(`{` + text + `}`))
	if err != nil || m.VisionParams != 0 || !strings.Contains(strings.Join(m.Notes, " "), "language model only") {
		t.Errorf("phi3_v without embd_layer: %v, %d vision, notes %q", err, m.VisionParams, m.Notes)
	}
}
