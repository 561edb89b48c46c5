package recommend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfConvHybrid holds the config.json fields of LiquidAI's LFM2 (embedded
// in hfConfig). Its first configs use the original training code's names
// (block_ff_dim, full_attn_idxs, tie_embedding), which Lfm2Config reads
// before its own.
type hfConvHybrid struct {
	ConvLCache            *int64          `json:"conv_L_cache"`
	ConvBias              *bool           `json:"conv_bias"`
	BlockFFDim            *int64          `json:"block_ff_dim"`
	BlockMultipleOf       *int64          `json:"block_multiple_of"`
	BlockFFNDimMultiplier json.RawMessage `json:"block_ffn_dim_multiplier"`
	BlockAutoAdjustFFDim  *bool           `json:"block_auto_adjust_ff_dim"`
	FullAttnIdxs          []int64         `json:"full_attn_idxs"`
	TieEmbedding          *bool           `json:"tie_embedding"`
}

// countLFM2 counts Lfm2ForCausalLM (LiquidAI LFM2 and LFM2.5, model_type
// lfm2), from transformers' modeling_lfm2.py. Each layer is either
//
//   - grouped-query attention: q, k, v and out_proj without biases, and an
//     RMSNorm of head_dim on the queries and on the keys; or
//   - a gated short convolution: in_proj from hidden to 3 × hidden, a
//     depthwise Conv1d of conv_L_cache taps over hidden channels, out_proj
//     back (biases on all three with conv_bias);
//
// layer_types names them ("full_attention" against "conv"), or, in the first
// configs, full_attn_idxs lists the attention layers (none given: every
// layer attends). Every layer also has two RMSNorms and a SwiGLU MLP (w1,
// w3, w2, no biases) whose width Lfm2MLP derives from intermediate_size
// (block_ff_dim where given): with block_auto_adjust_ff_dim, two thirds of
// it, times block_ffn_dim_multiplier and rounded up to block_multiple_of.
// Then a final RMSNorm (embedding_norm) and the head, tied to the embedding
// unless tie_embedding / tie_word_embeddings say otherwise. Left out, the
// class defaults apply: 8 KV heads, conv_L_cache 3, multiple of 256,
// multiplier 1.0, auto-adjust on, tied. LFM2-700M counts 742,489,344, the
// Hub's count.
//
// Only the attention layers keep a KV cache; a convolution layer keeps
// conv_L_cache values per channel, a fixed size per sequence not planned.
func countLFM2(c hfConfig) (oomsim.Model, error) {
	var f fields
	d, err := lfm2Shape(c, &f)
	if err != nil {
		return oomsim.Model{}, err
	}
	ffName, ffField := "intermediate_size", c.IntermediateSize
	if c.BlockFFDim != nil {
		ffName, ffField = "block_ff_dim", c.BlockFFDim
	}
	ff := f.need(ffName, ffField)
	kernel := f.opt("conv_L_cache", c.ConvLCache, 3)
	multipleOf := f.opt("block_multiple_of", c.BlockMultipleOf, 256)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if flag(c.BlockAutoAdjustFFDim, true) {
		ff = 2 * ff / 3
		// Lfm2MLP scales by block_ffn_dim_multiplier and rounds up to
		// block_multiple_of unless the multiplier is null; left out, it is
		// the class's 1.0.
		mult := 1.0
		raw := bytes.TrimSpace(c.BlockFFNDimMultiplier)
		if !bytes.Equal(raw, []byte("null")) {
			if len(raw) > 0 {
				if err := json.Unmarshal(raw, &mult); err != nil {
					return oomsim.Model{}, fmt.Errorf("block_ffn_dim_multiplier is not a number: %s", raw)
				}
			}
			scaled := mult * float64(ff)
			if math.IsNaN(scaled) || scaled < 1 || scaled > maxWidth {
				return oomsim.Model{}, fmt.Errorf("block_ffn_dim_multiplier %g makes an MLP width of %g", mult, scaled)
			}
			ff = int64(scaled)
			ff = multipleOf * ((ff + multipleOf - 1) / multipleOf)
		}
		if ff < 1 {
			return oomsim.Model{}, fmt.Errorf("%s %d is too small for an MLP after block_auto_adjust_ff_dim", ffName, *ffField)
		}
	}
	attention, err := lfm2Attention(c, d.L)
	if err != nil {
		return oomsim.Model{}, err
	}
	if err := tooMany(d.L, d.h, max(4*d.h+kernel, 3*ff, (d.heads+d.kv)*d.hd*2)); err != nil {
		return oomsim.Model{}, err
	}
	h := d.h
	attn, attnLinear, conv, convLinear := lfm2Mixers(c, h, d.heads*d.hd, d.kv*d.hd, d.hd, kernel)
	mlp := 3 * h * ff
	var nAttn, body, linear int64
	for _, a := range attention {
		if a {
			nAttn++
			body += attn
			linear += attnLinear
		} else {
			body += conv
			linear += convLinear
		}
		body += mlp + 2*h
		linear += mlp
	}
	var m oomsim.Model
	m.Params = d.vocab*h + body + h
	tied := flag(c.TieWordEmbeddings, true)
	if c.TieEmbedding != nil {
		tied = *c.TieEmbedding
	}
	if !tied {
		m.HeadParams = d.vocab * h
		m.Params += m.HeadParams
	}
	m.UnquantizedParams = m.Params - linear
	m.BufferBytes = d.hd / 2 * 4
	m.Arch = &oomsim.Arch{Layers: int(d.L), KVLayers: int(nAttn), Hidden: int(h), Heads: int(d.heads), KVHeads: int(d.kv),
		HeadDim: int(d.hd), FFN: int(ff), Vocab: int(d.vocab), MaxPositions: int(d.maxPos), Gated: true}
	m.Notes = append(m.Notes, fmt.Sprintf("lfm2: %d of %d layers are attention and keep a KV cache; the other %d are short convolutions whose fixed-size state is not planned",
		nAttn, d.L, d.L-nAttn))
	return m, nil
}

// lfm2Attention tells which of LFM2's L layers attend: layer_types where
// given ("full_attention", or "conv" / "linear_attention" for a
// convolution), else full_attn_idxs, else all of them (Lfm2Config).
func lfm2Attention(c hfConfig, L int64) ([]bool, error) {
	attention := make([]bool, L)
	switch {
	case len(c.LayerTypes) > 0:
		if int64(len(c.LayerTypes)) != L {
			return nil, fmt.Errorf("layer_types has %d entries for num_hidden_layers %d", len(c.LayerTypes), L)
		}
		for i, t := range c.LayerTypes {
			switch t {
			case "full_attention":
				attention[i] = true
			case "conv", "linear_attention":
			default:
				return nil, fmt.Errorf("layer_types[%d] is %q: want full_attention or conv", i, t)
			}
		}
	case c.FullAttnIdxs != nil:
		for _, i := range c.FullAttnIdxs {
			if i < 0 || i >= L {
				return nil, fmt.Errorf("full_attn_idxs has %d, outside the %d layers", i, L)
			}
			attention[i] = true
		}
	default:
		for i := range attention {
			attention[i] = true
		}
	}
	return attention, nil
}

// lfm2Mixers are one LFM2 layer's token mixers: the attention block (q, k,
// v and o, and the per-head q/k norms) and the short-convolution block (in
// and out projections, the depthwise kernel, and biases when conv_bias is
// set), each with its Linear share (what quantisation stores at low bits).
func lfm2Mixers(c hfConfig, h, q, k, hd, kernel int64) (attn, attnLinear, conv, convLinear int64) {
	attnLinear = 2*h*q + 2*h*k
	attn = attnLinear + 2*hd
	convLinear = h*3*h + h*h
	conv = convLinear + h*kernel
	if flag(c.ConvBias, false) {
		conv += 3*h + h + h
	}
	return attn, attnLinear, conv, convLinear
}

// lfm2Shape reads the decoder shape both LFM2 generations share, with
// their config classes' 8 KV heads when num_key_value_heads is left out.
func lfm2Shape(c hfConfig, f *fields) (decoder, error) {
	d := decoder{}
	d.h = f.need("hidden_size", c.HiddenSize)
	d.L = f.need("num_hidden_layers", c.NumHiddenLayers)
	d.heads = f.need("num_attention_heads", c.NumAttentionHeads)
	d.kv = f.opt("num_key_value_heads", c.NumKeyValueHeads, 8)
	d.vocab = f.need("vocab_size", c.VocabSize)
	d.maxPos, _ = opt("max_position_embeddings", c.MaxPositionEmbeddings, 0)
	return d, d.checkHeads(c, f)
}
