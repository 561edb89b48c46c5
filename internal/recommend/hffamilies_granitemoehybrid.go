package recommend

import (
	"encoding/json"
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfMambaHybrid holds the Mamba-2 fields of IBM's Granite 4.0 hybrids
// (embedded in hfConfig; mamba_proj_bias is hfConfig2026's). mamba_d_head
// may be the string "auto".
type hfMambaHybrid struct {
	MambaNHeads           *int64          `json:"mamba_n_heads"`
	MambaNGroups          *int64          `json:"mamba_n_groups"`
	MambaDState           *int64          `json:"mamba_d_state"`
	MambaDHead            json.RawMessage `json:"mamba_d_head"`
	MambaDConv            *int64          `json:"mamba_d_conv"`
	MambaExpand           *int64          `json:"mamba_expand"`
	MambaConvBias         *bool           `json:"mamba_conv_bias"`
	PositionEmbeddingType string          `json:"position_embedding_type"`
}

// countGraniteMoeHybrid counts GraniteMoeHybridForCausalLM (IBM Granite
// 4.0: the -H hybrids, and the dense Granite 4.0 models that share the
// class with attention in every layer), from transformers'
// modeling_granitemoehybrid.py. layer_types names each layer's mixer
// ("mamba" or "attention"; none given, every layer is Mamba):
//
//   - a Mamba-2 mixer (BambaMixer) of mamba_n_heads heads of mamba_d_head
//     over d = mamba_expand × hidden channels: in_proj from hidden to the
//     gate, x, B and C (mamba_n_groups × mamba_d_state each) and one dt per
//     head; a depthwise Conv1d of mamba_d_conv taps over x, B and C (a bias
//     with mamba_conv_bias); dt_bias, A_log and D per head; a gated RMSNorm
//     of d; out_proj back (biases on both projections with mamba_proj_bias);
//   - or grouped-query attention, q, k, v and o (biases with
//     attention_bias), with RoPE only if position_embedding_type is "rope";
//
// then, in every layer, num_local_experts experts of intermediate_size (a
// fused gate/up and a down projection each) behind a bias-free router,
// num_experts_per_tok a token, beside a shared SwiGLU MLP of
// shared_intermediate_size; with 0 experts the shared MLP alone (the
// Granite 4.0 dense models). Two RMSNorms a layer, a final one, and the
// head (tied with tie_word_embeddings). Left out, the class defaults
// apply: 8 experts, 2 a token, a shared width of 1024, 128 Mamba heads,
// 1 group, a state of 256, a kernel of 4, an expansion of 2.
// granite-4.0-h-tiny counts 6,939,037,248, the Hub's count.
//
// Only the attention layers keep a KV cache; a Mamba layer keeps a state of
// a fixed size per sequence (mamba2State).
func countGraniteMoeHybrid(c hfConfig) (oomsim.Model, error) {
	var f fields
	d := standardShape(c, &f)
	if err := d.checkHeads(c, &f); err != nil {
		return oomsim.Model{}, err
	}
	mamba := make([]bool, d.L)
	var nM int64
	switch {
	case len(c.LayerTypes) == 0:
		for i := range mamba {
			mamba[i] = true
		}
		nM = d.L
	case int64(len(c.LayerTypes)) != d.L:
		return oomsim.Model{}, fmt.Errorf("layer_types has %d entries for num_hidden_layers %d", len(c.LayerTypes), d.L)
	default:
		for i, t := range c.LayerTypes {
			switch t {
			case "mamba", "linear_attention":
				mamba[i] = true
				nM++
			case "attention", "full_attention":
			default:
				return oomsim.Model{}, fmt.Errorf("layer_types[%d] is %q: want mamba or attention", i, t)
			}
		}
	}
	nA := d.L - nM
	// num_local_experts 0 is a dense model: no router, no experts.
	var E int64
	if c.NumLocalExperts == nil || *c.NumLocalExperts != 0 {
		E = f.opt("num_local_experts", c.NumLocalExperts, 8)
	}
	var topK, ffn int64
	if E > 0 {
		topK = f.opt("num_experts_per_tok", c.NumExpertsPerTok, 2)
		ffn = f.need("intermediate_size", c.IntermediateSize)
	}
	shared := int64(0)
	if c.SharedIntermediateSize == nil || *c.SharedIntermediateSize != 0 {
		shared = f.opt("shared_intermediate_size", c.SharedIntermediateSize, 1024)
	}
	var mHeads, mDim, groups, state, kernel, dInner int64
	if nM > 0 {
		mHeads = f.opt("mamba_n_heads", c.MambaNHeads, 128)
		groups = f.opt("mamba_n_groups", c.MambaNGroups, 1)
		state = f.opt("mamba_d_state", c.MambaDState, 256)
		kernel = f.opt("mamba_d_conv", c.MambaDConv, 4)
		expand := f.opt("mamba_expand", c.MambaExpand, 2)
		if f.err != nil {
			return oomsim.Model{}, f.err
		}
		if err := tooMany(expand, d.h); err != nil {
			return oomsim.Model{}, err
		}
		dInner = expand * d.h
		if dInner%mHeads != 0 {
			return oomsim.Model{}, fmt.Errorf("mamba_n_heads %d does not divide mamba_expand × hidden_size %d", mHeads, dInner)
		}
		mDim = dInner / mHeads
		var given int64
		if err := json.Unmarshal(c.MambaDHead, &given); err == nil {
			mDim = f.need("mamba_d_head", &given)
		} else if s := string(c.MambaDHead); len(c.MambaDHead) > 0 && s != `"auto"` && s != "null" {
			return oomsim.Model{}, fmt.Errorf("mamba_d_head is %s: want a number or \"auto\"", s)
		}
		if f.err == nil && mDim*mHeads != dInner {
			return oomsim.Model{}, fmt.Errorf("mamba_n_heads %d × mamba_d_head %d is not mamba_expand × hidden_size %d", mHeads, mDim, dInner)
		}
	}
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if topK > E {
		return oomsim.Model{}, fmt.Errorf("num_experts_per_tok %d is more than the %d experts", topK, E)
	}
	h := d.h
	conv := dInner + 2*groups*state
	inProj := dInner + conv + mHeads
	for _, err := range []error{tooMany(d.L, h, max(inProj+dInner, 2*(d.heads+d.kv)*d.hd, 3*shared+E)), tooMany(d.L, E, 3*h, max(ffn, 1)),
		tooMany(conv, kernel), tooMany(d.vocab, h)} {
		if err != nil {
			return oomsim.Model{}, err
		}
	}
	mambaLinear := h*inProj + dInner*h
	mambaLayer := mambaLinear + conv*kernel + 3*mHeads + dInner
	if flag(c.MambaConvBias, true) {
		mambaLayer += conv
	}
	if flag(c.MambaProjBias, false) {
		mambaLayer += inProj + h
	}
	q, k := d.heads*d.hd, d.kv*d.hd
	attnLinear := 2*h*q + 2*h*k
	attn := attnLinear
	if flag(c.AttentionBias, false) {
		attn += q + 2*k + h
	}
	expert := 3 * h * ffn
	mlpLinear := E*expert + 3*h*shared
	mlp := mlpLinear + h*E // the router
	var m oomsim.Model
	linear := nM*mambaLinear + nA*attnLinear + d.L*mlpLinear
	m.Params = d.vocab*h + nM*mambaLayer + nA*attn + d.L*(mlp+2*h) + h
	if !flag(c.TieWordEmbeddings, false) {
		m.HeadParams = d.vocab * h
		m.Params += m.HeadParams
	}
	if E > 0 {
		m.ActiveParams = m.Params - d.L*(E-topK)*expert
		m.Experts, m.ExpertsPerToken = int(E), int(topK)
	}
	m.UnquantizedParams = m.Params - linear
	if c.PositionEmbeddingType == "rope" {
		m.BufferBytes = d.hd / 2 * 4
	}
	m.Arch = &oomsim.Arch{Layers: int(d.L), KVLayers: int(nA), Hidden: int(h), Heads: int(d.heads), KVHeads: int(d.kv),
		HeadDim: int(d.hd), FFN: int(topK*ffn + shared), Vocab: int(d.vocab), MaxPositions: int(d.maxPos), Gated: true,
		StateValues: nM * mamba2State(mHeads, mDim, state, conv, kernel)}
	m.Notes = append(m.Notes, fmt.Sprintf("granitemoehybrid: %d Mamba-2 and %d attention layers, %d experts (%d a token) and a shared MLP of %d; only the attention layers keep a KV cache",
		nM, nA, E, topK, shared))
	return m, nil
}
