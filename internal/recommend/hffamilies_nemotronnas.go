package recommend

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfNemotronNAS holds DeciLM's per-block shapes (embedded in hfConfig).
type hfNemotronNAS struct {
	BlockConfigs json.RawMessage `json:"block_configs"`
}

// nasBlock is one entry of block_configs (modeling_decilm.py's
// BlockConfig): its attention and its FFN, each kept, replaced with one
// hidden × hidden Linear, or taken out.
type nasBlock struct {
	Attention struct {
		NHeadsInGroup     *int64 `json:"n_heads_in_group"`
		NoOp              bool   `json:"no_op"`
		ReplaceWithLinear bool   `json:"replace_with_linear"`
	} `json:"attention"`
	FFN struct {
		FFNMult           *float64 `json:"ffn_mult"`
		NoOp              bool     `json:"no_op"`
		ReplaceWithLinear bool     `json:"replace_with_linear"`
	} `json:"ffn"`
}

// countNemotronNAS counts DeciLMForCausalLM (model_type "nemotron-nas":
// NVIDIA's Llama-3.3-Nemotron-Super-49B and Llama-3.1-Nemotron-Ultra-253B),
// a Llama 3 whose blocks a neural architecture search reshaped one by one
// (block_configs; the model's remote modeling_decilm.py):
//   - attention: grouped-query attention with num_attention_heads /
//     n_heads_in_group KV heads of hidden_size / num_attention_heads, or a
//     hidden × hidden Linear (replace_with_linear), or none (no_op);
//   - FFN: a SwiGLU of _ffn_mult_to_intermediate_size(ffn_mult, hidden) =
//     int(2·ffn_mult·hidden/3) rounded up to a multiple of 256, or a
//     Linear, or none;
//   - input_layernorm only with an attention, post_attention_layernorm only
//     with an FFN; an untied head.
//
// Only the blocks that keep their attention keep a KV cache; a block's
// window_length (sliding attention) is not planned: Super-49B's blocks
// leave it null. Super-49B's file gives 49,867,145,216, its published count.
func countNemotronNAS(c hfConfig) (oomsim.Model, error) {
	var f fields
	h := f.need("hidden_size", c.HiddenSize)
	heads := f.need("num_attention_heads", c.NumAttentionHeads)
	V := f.need("vocab_size", c.VocabSize)
	maxPos, _ := opt("max_position_embeddings", c.MaxPositionEmbeddings, 0)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if len(c.BlockConfigs) == 0 || string(c.BlockConfigs) == "null" {
		return oomsim.Model{}, fmt.Errorf("nemotron-nas: block_configs is missing")
	}
	var blocks []nasBlock
	if err := json.Unmarshal(c.BlockConfigs, &blocks); err != nil {
		return oomsim.Model{}, fmt.Errorf("nemotron-nas: block_configs: %v", err)
	}
	L := int64(len(blocks))
	if L == 0 || L > maxLayers || h > maxWidth || heads > maxHeads || heads > h || V > maxWidth {
		return oomsim.Model{}, fmt.Errorf("nemotron-nas: %d blocks, hidden_size %d, %d heads, vocab_size %d: out of range", L, h, heads, V)
	}
	if n := c.NumHiddenLayers; n != nil && *n != L {
		return oomsim.Model{}, fmt.Errorf("nemotron-nas: block_configs has %d blocks for num_hidden_layers %d", L, *n)
	}
	hd := h / heads
	var params, linear, kvSum, nAttn, nFFN, ffnSum, ffnMax int64
	ffnMin := int64(math.MaxInt64)
	for i, b := range blocks {
		switch a := b.Attention; {
		case a.NoOp:
		case a.ReplaceWithLinear:
			params += h*h + h
			linear += h * h
		default:
			if a.NHeadsInGroup == nil || *a.NHeadsInGroup <= 0 || heads%*a.NHeadsInGroup != 0 {
				return oomsim.Model{}, fmt.Errorf("nemotron-nas: block %d: n_heads_in_group must divide num_attention_heads %d", i, heads)
			}
			kv := heads / *a.NHeadsInGroup
			lin := 2*h*heads*hd + 2*h*kv*hd
			params += lin + h
			linear += lin
			kvSum += kv
			nAttn++
		}
		switch g := b.FFN; {
		case g.NoOp:
		case g.ReplaceWithLinear:
			params += h*h + h
			linear += h * h
		default:
			if g.FFNMult == nil || math.IsNaN(*g.FFNMult) || *g.FFNMult <= 0 || *g.FFNMult > 64 {
				return oomsim.Model{}, fmt.Errorf("nemotron-nas: block %d: ffn_mult must be a positive number up to 64", i)
			}
			inter := (int64(2**g.FFNMult*float64(h)/3) + 255) / 256 * 256
			params += 3*h*inter + h
			linear += 3 * h * inter
			ffnSum += inter
			ffnMax, ffnMin = max(ffnMax, inter), min(ffnMin, inter)
			nFFN++
		}
	}
	var m oomsim.Model
	m.HeadParams = V * h
	m.Params = V*h + params + h + m.HeadParams
	m.UnquantizedParams = m.Params - linear
	m.BufferBytes = hd / 2 * 4
	kv := int64(0)
	if nAttn > 0 {
		kv = (kvSum + nAttn - 1) / nAttn
	}
	ffn := ffnMax
	if nFFN > 0 {
		ffn = ffnSum / nFFN
	}
	m.Arch = &oomsim.Arch{Layers: int(L), KVLayers: int(nAttn), Hidden: int(h), Heads: int(heads), KVHeads: int(kv),
		HeadDim: int(hd), FFN: int(ffn), Vocab: int(V), MaxPositions: int(maxPos), Gated: true}
	m.Notes = append(m.Notes, fmt.Sprintf("nemotron-nas: %d blocks, %d with attention (only they keep a KV cache) and %d with a SwiGLU FFN of %d to %d wide; activations are planned with their mean width, %d",
		L, nAttn, nFFN, min(ffnMin, ffnMax), ffnMax, ffn))
	return m, nil
}
