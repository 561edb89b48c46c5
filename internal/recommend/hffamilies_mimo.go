package recommend

import (
	"encoding/json"
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfMiMo holds MiMo-V2-Flash's fields (embedded in hfConfig).
type hfMiMo struct {
	HybridLayerPattern       []int64 `json:"hybrid_layer_pattern"`
	SwaNumAttentionHeads     *int64  `json:"swa_num_attention_heads"`
	SwaNumKeyValueHeads      *int64  `json:"swa_num_key_value_heads"`
	SwaHeadDim               *int64  `json:"swa_head_dim"`
	SwaVHeadDim              *int64  `json:"swa_v_head_dim"`
	AddSwaAttentionSinkBias  *bool   `json:"add_swa_attention_sink_bias"`
	AddFullAttentionSinkBias *bool   `json:"add_full_attention_sink_bias"`
}

// countMiMoV2Flash counts MiMoV2FlashForCausalLM (XiaomiMiMo/MiMo-V2-Flash;
// model_type mimo_v2_flash, remote code): per block, either full attention
// (num_attention_heads queries and num_key_value_heads keys of head_dim,
// values of v_head_dim) or sliding-window attention of its own head counts
// and sizes (swa_*), hybrid_layer_pattern saying which (1: sliding); a
// per-head attention-sink bias where add_*_attention_sink_bias is set; then
// a SwiGLU of intermediate_size, or, where moe_layer_freq's entry is 1, a
// mixture of n_routed_experts experts of moe_intermediate_size with a
// sigmoid router and its score-correction bias (noaux_tc), no shared
// expert; two RMSNorms a block; an untied head. The Hub's count,
// 309,785,318,400, is 1,006,537,536 more than this: the
// multi-token-prediction layers, which devctl leaves out as for DeepSeek-V3.
//
// The KV cache: full layers keep num_key_value_heads × (head_dim +
// v_head_dim) values per token, sliding ones swa_num_key_value_heads ×
// (swa_head_dim + swa_v_head_dim), held to sliding_window tokens by
// engines that do.
func countMiMoV2Flash(c hfConfig) (oomsim.Model, error) {
	var f fields
	h := f.need("hidden_size", c.HiddenSize)
	V := f.need("vocab_size", c.VocabSize)
	heads := f.need("num_attention_heads", c.NumAttentionHeads)
	kv := f.need("num_key_value_heads", c.NumKeyValueHeads)
	hd := f.need("head_dim", c.HeadDim)
	vd := f.opt("v_head_dim", c.VHeadDim, hd)
	sHeads := f.opt("swa_num_attention_heads", c.SwaNumAttentionHeads, heads)
	sKV := f.opt("swa_num_key_value_heads", c.SwaNumKeyValueHeads, kv)
	sHD := f.opt("swa_head_dim", c.SwaHeadDim, hd)
	sVD := f.opt("swa_v_head_dim", c.SwaVHeadDim, vd)
	ffn := f.need("intermediate_size", c.IntermediateSize)
	E := f.need("n_routed_experts", c.NRoutedExperts)
	moeFFN := f.need("moe_intermediate_size", c.MoEIntermediateSize)
	topK := f.need("num_experts_per_tok", c.NumExpertsPerTok)
	maxPos, _ := opt("max_position_embeddings", c.MaxPositionEmbeddings, 0)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	pattern, moe := c.HybridLayerPattern, c.MoELayerFreq.perBlock
	L := int64(len(pattern))
	if n := c.NumHiddenLayers; n != nil && *n != L {
		return oomsim.Model{}, fmt.Errorf("mimo_v2_flash: hybrid_layer_pattern has %d blocks for num_hidden_layers %d", L, *n)
	}
	if L == 0 || int64(len(moe)) != L {
		return oomsim.Model{}, fmt.Errorf("mimo_v2_flash: hybrid_layer_pattern (%d blocks) and moe_layer_freq (%d) must list every block", L, len(moe))
	}
	if kv == 0 || sKV == 0 || heads%kv != 0 || sHeads%sKV != 0 || topK > E {
		return oomsim.Model{}, fmt.Errorf("mimo_v2_flash: heads %d/%d and %d/%d, experts %d of %d do not fit together", heads, kv, sHeads, sKV, topK, E)
	}
	for _, err := range []error{tooMany(L, h, max(heads, sHeads), max(hd, sHD)+max(vd, sVD)), tooMany(L, E, 3*h, moeFFN), tooMany(L, 3*h, ffn), tooMany(V, 2*h)} {
		if err != nil {
			return oomsim.Model{}, err
		}
	}
	attn := func(heads, kv, hd, vd int64, sink bool) (params, linear int64) {
		linear = h*heads*hd + h*kv*hd + h*kv*vd + heads*vd*h
		if sink {
			return linear + heads, linear
		}
		return linear, linear
	}
	expert := 3 * h * moeFFN
	var params, linear, active, nSliding int64
	for i := range L {
		var p, l int64
		switch pattern[i] {
		case 0:
			p, l = attn(heads, kv, hd, vd, flag(c.AddFullAttentionSinkBias, false))
		case 1:
			p, l = attn(sHeads, sKV, sHD, sVD, flag(c.AddSwaAttentionSinkBias, false))
			nSliding++
		default:
			return oomsim.Model{}, fmt.Errorf("mimo_v2_flash: hybrid_layer_pattern lists %d: want 0 (full) or 1 (sliding)", pattern[i])
		}
		params, linear, active = params+p+2*h, linear+l, active+p+2*h
		if moe[i] == 1 {
			params += E*expert + E*h + E
			linear += E * expert
			active += topK*expert + E*h + E
		} else {
			params += 3 * h * ffn
			linear += 3 * h * ffn
			active += 3 * h * ffn
		}
	}
	var m oomsim.Model
	m.HeadParams = V * h
	m.Params = V*h + params + h + m.HeadParams
	m.ActiveParams = V*h + active + h + m.HeadParams
	m.UnquantizedParams = m.Params - linear
	m.Experts, m.ExpertsPerToken = int(E), int(topK)
	m.BufferBytes = hd / 2 * 4
	window := int64(0)
	if len(c.SlidingWindow) > 0 && string(c.SlidingWindow) != "null" {
		if err := json.Unmarshal(c.SlidingWindow, &window); err != nil || window < 0 || window > maxDim {
			return oomsim.Model{}, fmt.Errorf("mimo_v2_flash: sliding_window is %s: want a number of tokens", c.SlidingWindow)
		}
	}
	m.Arch = &oomsim.Arch{Layers: int(L), KVLayers: int(L), Hidden: int(h), Heads: int(heads), KVHeads: int(sKV),
		HeadDim: int((sHD + sVD) / 2), FFN: int(topK * moeFFN), Vocab: int(V), MaxPositions: int(maxPos), Gated: true,
		FullKVHeads: int(kv), FullHeadDim: int((hd + vd) / 2)}
	if window > 0 && nSliding > 0 {
		m.Arch.SlidingWindow, m.Arch.SlidingLayers = int(window), int(nSliding)
	} else {
		m.Arch.KVHeads, m.Arch.HeadDim = int(kv), int((hd+vd)/2)
	}
	m.Notes = append(m.Notes, fmt.Sprintf("mimo_v2_flash: %d sliding-window blocks (window %d) and %d full-attention ones; keys and values of unequal sizes are planned at their mean per head", nSliding, window, L-nSliding))
	return m, nil
}
