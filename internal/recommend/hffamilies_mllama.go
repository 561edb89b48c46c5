package recommend

import (
	"fmt"
	"math"
	"slices"

	"github.com/devctl/devctl/internal/oomsim"
)

// mllamaFields holds the config.json fields of Llama 3.2 Vision (mllama)
// that no other family reads: the text model's cross-attention layers and
// the vision encoder's tiling (embedded in hfConfig and qwenVision).
type mllamaFields struct {
	CrossAttentionLayers []int64 `json:"cross_attention_layers"`
}

type mllamaVisionFields struct {
	NumGlobalLayers       *int64    `json:"num_global_layers"`
	MaxNumTiles           *int64    `json:"max_num_tiles"`
	SupportedAspectRatios [][]int64 `json:"supported_aspect_ratios"`
	VisionOutputDim       *int64    `json:"vision_output_dim"`
}

// Llama 3.2 Vision's defaults (transformers' MllamaTextConfig and
// MllamaVisionConfig), which the Hub's later configs leave out.
var (
	mllamaCrossLayers  = []int64{3, 8, 13, 18, 23, 28, 33, 38}
	mllamaAspectRatios = 8 // [[1,1],[1,2],[1,3],[1,4],[2,1],[2,2],[3,1],[4,1]] for 4 tiles
)

// countMllama counts MllamaForConditionalGeneration (Llama 3.2 Vision
// 11B/90B) as transformers' modeling_mllama.py builds it:
//
//   - the language model (text_config): Llama 3.1's blocks, except that
//     the layers in cross_attention_layers attend to the image instead of
//     the text (the same q, k, v, o shapes, plus per-head q and k RMSNorms
//     and two tanh gates); an embedding of vocab_size + 8 rows; an untied
//     head of vocab_size;
//   - the vision encoder (mllamaVision) and the projector, a Linear
//     with a bias from vision_output_dim to the text hidden size.
//
// Only the self-attention layers keep a KV cache that grows with the text;
// a cross-attention layer caches the image's keys and values, a fixed size
// per image, which is not planned. Llama-3.2-11B-Vision-Instruct counts
// 10,670,220,835, the Hub's safetensors count.
func countMllama(c hfConfig) (oomsim.Model, error) {
	if c.TextConfig == nil {
		return oomsim.Model{}, fmt.Errorf("no text_config")
	}
	tc := *c.TextConfig
	if tc.VocabSize == nil {
		v := int64(128_256)
		tc.VocabSize = &v
	}
	if tc.NumKeyValueHeads == nil {
		kv := int64(8)
		tc.NumKeyValueHeads = &kv
	}
	var f fields
	d, ffn, err := shapedDecoder(tc, &f)
	if err != nil {
		return oomsim.Model{}, err
	}
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	cross := tc.CrossAttentionLayers
	if cross == nil {
		cross = mllamaCrossLayers
	}
	seen := map[int64]bool{}
	for _, i := range cross {
		if i < 0 || i >= d.L || seen[i] {
			return oomsim.Model{}, fmt.Errorf("cross_attention_layers has %d: want distinct layers of 0..%d", i, d.L-1)
		}
		seen[i] = true
	}
	if err := tooMany(d.L, d.h, 3*ffn+2*(d.heads+d.kv)*d.hd); err != nil {
		return oomsim.Model{}, err
	}
	d.norms = 2
	d.tied = flag(tc.TieWordEmbeddings, false)
	mlp := dense(d.h, ffn, false)
	hd := d.hd
	d.mlp = func(i int64) (int64, int64, int64) {
		p, a, l := mlp(i)
		if slices.Contains(cross, i) {
			p += 2*hd + 2 // the q and k norms, the attention and MLP gates
			a += 2*hd + 2
		}
		return p, a, l
	}
	d.activeFFN = ffn
	m := d.count()
	extra := 8 * d.h // the embedding's 8 rows past vocab_size (image tokens)
	m.Params += extra
	m.UnquantizedParams += extra
	m.Arch.KVLayers = int(d.L) - len(cross)
	m.Notes = append(m.Notes, fmt.Sprintf("mllama: %d of %d layers attend to the image; only the other %d keep a KV cache of the text (the image's keys and values, a fixed size per image, are not planned)",
		len(cross), d.L, m.Arch.KVLayers))
	n, image, err := mllamaVision(c.VisionConfig, d.h)
	if err != nil {
		m.Notes = append(m.Notes, "mllama: the language model only; the vision encoder is not counted: "+err.Error())
		return m, nil
	}
	m.Arch.ImageProfileBytes = image
	m = withVisionTower(m, "mllama", n)
	m.Notes = append(m.Notes, fmt.Sprintf("mllama: under vLLM, its start-up profile of one image at the largest tiling per sequence is planned (%.2f GiB an image)",
		float64(m.Arch.ImageProfileBytes)/float64(oomsim.GiB)))
	return m, nil
}

// mllamaVision counts Llama 3.2 Vision's encoder and its projector
// (MllamaVisionModel, MllamaModel.multi_modal_projector), and says what
// the encoder holds for one image (mllamaImageBytes). The parameters:
//
//   - a bias-free patch Conv2d, a class embedding, a gated position table of
//     (image_size / patch_size)² + 1 rows and a gated tile-position table
//     per aspect ratio (len(supported_aspect_ratios) + 1 rows of
//     max_num_tiles such tables), two gated tile embeddings before and after
//     the encoder, two LayerNorms with biases;
//   - num_hidden_layers local and num_global_layers gated global blocks:
//     two LayerNorms, q, k, v and o without biases, a two-Linear GELU MLP
//     of intermediate_size with biases (the global ones add two gates);
//   - the projector from vision_output_dim (the last hidden state and the
//     intermediate layers' concatenated) to the text hidden size, with a
//     bias.
func mllamaVision(v *qwenVision, textHidden int64) (params, imageBytes int64, err error) {
	if v == nil {
		return 0, 0, fmt.Errorf("no vision_config")
	}
	var f fields
	d := f.opt("hidden_size", v.HiddenSize, 1280)
	inter := f.opt("intermediate_size", v.IntermediateSize, 5120)
	local := f.opt("num_hidden_layers", v.NumHiddenLayers, 32)
	global := f.opt("num_global_layers", v.NumGlobalLayers, 8)
	image := f.opt("image_size", v.ImageSize, 448)
	patch := f.opt("patch_size", v.PatchSize, 14)
	ch := f.opt("num_channels", v.NumChannels, 3)
	tiles := f.opt("max_num_tiles", v.MaxNumTiles, 4)
	out := f.opt("vision_output_dim", v.VisionOutputDim, 7680)
	if f.err != nil {
		return 0, 0, f.err
	}
	ratios := int64(mllamaAspectRatios)
	if v.SupportedAspectRatios != nil {
		ratios = int64(len(v.SupportedAspectRatios))
	}
	if image < patch {
		return 0, 0, fmt.Errorf("image_size %d and patch_size %d do not make patches", image, patch)
	}
	positions := (image/patch)*(image/patch) + 1
	for _, err := range []error{tooMany(local+global, d, 4*d+2*inter), tooMany(ratios+1, tiles, positions, d),
		tooMany(ch*patch*patch, d), tooMany(out, textHidden)} {
		if err != nil {
			return 0, 0, err
		}
	}
	block := 2*2*d + 4*d*d + d*inter + inter + inter*d + d
	embeddings := ch*patch*patch*d + d + // patch Conv2d, class embedding
		1 + positions*d + (ratios+1)*tiles*positions*d + // gated position and tile-position tables
		2*((ratios+1)*tiles*d+1) + // the pre- and post-tile embeddings with their gates
		2*2*d // layernorm_pre, layernorm_post
	params = embeddings + local*block + global*(block+2) + out*textHidden + textHidden
	return params, mllamaImageBytes(d, tiles, positions, out/d), nil
}

// mllamaImageBytes is what Llama 3.2 Vision's encoder of width d holds at
// its peak for one image at its largest tiling, in 16 bits (vLLM's
// mllama.py, the SDPA vision attention): T = tiles × the tile's patches
// and class token (positions), padded to a multiple of 8 (4 × 1,608 =
// 6,432 at 560 pixels);
//
//   - the dense aspect-ratio attention mask, T × T in the model's dtype,
//     kept through all the layers;
//   - T × d for the hidden state and each intermediate layer's output the
//     encoder keeps for the projector (kept: vision_output_dim / d, the
//     hidden state and 5 intermediate outputs);
//   - a layer's transients, about 8 × T × d (q, k and v, their per-head
//     copies, the attention output; or the MLP's two intermediate_size
//     tensors, 4 × d each).
//
// 0.29 GiB for the 11B and 90B releases.
func mllamaImageBytes(d, tiles, positions, kept int64) int64 {
	padded := positions + (8-positions%8)%8
	t := float64(tiles * padded)
	return int64(min(2*(t*t+float64(max(kept, 1)+8)*t*float64(d)), math.MaxInt64/2))
}
