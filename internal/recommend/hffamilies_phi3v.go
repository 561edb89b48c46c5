package recommend

import (
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfPhi3V holds the config.json fields of Phi-3-vision and Phi-3.5-vision
// (model_type phi3_v, remote code), embedded in hfConfig.
type hfPhi3V struct {
	EmbdLayer    *phi3VEmbdLayer    `json:"embd_layer"`
	ImgProcessor *phi3VImgProcessor `json:"img_processor"`
}

// phi3VEmbdLayer is embd_layer, the keyword arguments of the remote code's
// Phi3ImageEmbedding.
type phi3VEmbdLayer struct {
	EmbeddingCls           string `json:"embedding_cls"`
	ProjectionCls          string `json:"projection_cls"`
	UseHDTransform         *bool  `json:"use_hd_transform"`
	WithLearnableSeparator *bool  `json:"with_learnable_separator"`
}

// phi3VImgProcessor is img_processor: which image encoder, and its width.
type phi3VImgProcessor struct {
	Name        string `json:"name"`
	ModelName   string `json:"model_name"`
	ImageDimOut *int64 `json:"image_dim_out"`
}

// phi3VCLIP is the one image encoder the remote code builds: its
// CLIP_VIT_LARGE_PATCH14_336_CONFIG, whatever config.json says besides.
const phi3VCLIP = "openai/clip-vit-large-patch14-336"

// countPhi3V counts Phi3VForCausalLM as its remote code
// (modeling_phi3_v.py, shipped with microsoft/Phi-3-vision-128k-instruct and
// Phi-3.5-vision-instruct) builds it:
//
//   - the Phi-3 language model of the top-level fields (countModernDecoder
//     "phi3": fused qkv and gate/up, no biases, its own head);
//   - when embd_layer is given, Phi3ImageEmbedding: a CLIPVisionModel of
//     the fixed CLIP ViT-L/14 at 336 pixels (clipVisionParams' default
//     tower, post-LayerNorm included: the checkpoint stores it though the
//     features come from the second-to-last layer); with
//     with_learnable_separator, glb_GN and sub_GN (4 × image_dim_out
//     each); and img_projection: "linear" is one Linear of image_dim_out,
//     "mlp" two Linear layers with biases, the first over 4 ×
//     image_dim_out merged features under use_hd_transform. Its wte is the
//     language model's embedding, shared.
//
// Phi-3.5-vision-instruct counts 4,146,621,440 (testdata/models/README.md).
func countPhi3V(c hfConfig) (oomsim.Model, error) {
	m, err := countModernDecoder(c, "phi3")
	if err != nil {
		return m, err
	}
	if c.EmbdLayer == nil {
		m.Notes = append(m.Notes, "phi3_v: no embd_layer, so no image embedding: the language model only")
		return m, nil
	}
	n, err := phi3VImageParams(c.EmbdLayer, c.ImgProcessor, int64(m.Arch.Hidden))
	if err != nil {
		return oomsim.Model{}, err
	}
	return withVisionTower(m, "phi3_v", n), nil
}

// phi3VImageParams counts Phi3ImageEmbedding for a language model of width
// hidden; the remote code's asserts are errors here.
func phi3VImageParams(e *phi3VEmbdLayer, p *phi3VImgProcessor, hidden int64) (int64, error) {
	if p == nil {
		return 0, fmt.Errorf("no img_processor (the image encoder of embd_layer)")
	}
	if p.Name != "clip_vision_model" {
		return 0, fmt.Errorf("img_processor name %q: only clip_vision_model is built", p.Name)
	}
	if p.ModelName != phi3VCLIP {
		return 0, fmt.Errorf("img_processor model_name %q: only %s is built", p.ModelName, phi3VCLIP)
	}
	var f fields
	dim := f.need("img_processor image_dim_out", p.ImageDimOut)
	if f.err != nil {
		return 0, f.err
	}
	hd, sep := flag(e.UseHDTransform, false), flag(e.WithLearnableSeparator, false)
	if hd != sep {
		return 0, fmt.Errorf("embd_layer use_hd_transform %t and with_learnable_separator %t must be equal", hd, sep)
	}
	clip, _, err := clipVisionParams(nil)
	if err != nil {
		return 0, err
	}
	in := dim
	if hd {
		in = 4 * dim
	}
	var proj int64
	switch e.ProjectionCls {
	case "", "linear":
		proj = dim*hidden + hidden
	case "mlp":
		proj = in*hidden + hidden + hidden*hidden + hidden
	default:
		return 0, fmt.Errorf("embd_layer projection_cls %q: want linear or mlp", e.ProjectionCls)
	}
	n := clip + proj
	if sep {
		n += 2 * 4 * dim
	}
	return n, nil
}
