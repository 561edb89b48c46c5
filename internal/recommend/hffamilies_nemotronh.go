package recommend

import (
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// countNemotronH counts NVIDIA's hybrid Mamba-2 models (model_type
// nemotron_h: Nemotron-H, Nemotron-3-Nano). hybrid_override_pattern names
// each block by its one mixer, every block also holding one RMSNorm:
//
//   - M, a Mamba-2 mixer of mamba_num_heads heads of mamba_head_dim (d =
//     heads × head_dim): in_proj from the hidden state to the gate, the
//     convolved x, B and C (n_groups × ssm_state_size each) and one dt per
//     head; a depthwise conv1d of conv_kernel over x, B and C with a bias
//     (use_conv_bias); dt_bias, A_log and D per head; a gated RMSNorm of d;
//     out_proj back (biases on the projections with mamba_proj_bias);
//   - *, grouped-query attention (head_dim, attention_bias);
//   - -, an MLP of intermediate_size, up and down (relu², not gated);
//   - E, a mixture of n_routed_experts such MLPs of moe_intermediate_size,
//     num_experts_per_tok a token, with n_shared_experts of
//     moe_shared_expert_intermediate_size and a router (its score
//     correction is a buffer, not a parameter);
//
// then a final norm and the head (untied unless tie_word_embeddings).
// Nemotron-3-Nano-30B-A3B counts 31,577,937,344, the Hub's count exactly.
//
// Only the attention blocks keep a KV cache; a Mamba block's state is a
// fixed size per sequence and not planned. For the activations the
// blocks, one sublayer each, are planned as half as many transformer
// layers.
func countNemotronH(c hfConfig) (oomsim.Model, error) {
	var f fields
	h := f.need("hidden_size", c.HiddenSize)
	heads := f.need("num_attention_heads", c.NumAttentionHeads)
	kv := f.opt("num_key_value_heads", c.NumKeyValueHeads, heads)
	V := f.need("vocab_size", c.VocabSize)
	pattern := c.HybridOverridePattern
	L := int64(len(pattern))
	if L == 0 {
		return oomsim.Model{}, fmt.Errorf("hybrid_override_pattern is missing or empty")
	}
	var nM, nA, nMLP, nE int64
	for _, b := range pattern {
		switch b {
		case 'M':
			nM++
		case '*':
			nA++
		case '-':
			nMLP++
		case 'E':
			nE++
		default:
			return oomsim.Model{}, fmt.Errorf("hybrid_override_pattern has %q: want M, *, - or E", b)
		}
	}
	if n := f.opt("num_hidden_layers", c.NumHiddenLayers, L); f.err == nil && n != L {
		return oomsim.Model{}, fmt.Errorf("hybrid_override_pattern has %d blocks for num_hidden_layers %d", L, n)
	}
	hd := f.opt("head_dim", c.HeadDim, h/max(heads, 1))
	var mHeads, mDim, groups, state, kernel, ffn, E, topK, moeFFN, sharedN, sharedFFN int64
	if nM > 0 {
		mHeads = f.need("mamba_num_heads", c.MambaNumHeads)
		mDim = f.need("mamba_head_dim", c.MambaHeadDim)
		groups = f.opt("n_groups", c.NGroups, 1)
		state = f.need("ssm_state_size", c.SSMStateSize)
		kernel = f.opt("conv_kernel", c.ConvKernel, 4)
	}
	if nMLP > 0 {
		ffn = f.need("intermediate_size", c.IntermediateSize)
	}
	if nE > 0 {
		E = f.need("n_routed_experts", c.NRoutedExperts)
		topK = f.need("num_experts_per_tok", c.NumExpertsPerTok)
		moeFFN = f.need("moe_intermediate_size", c.MoEIntermediateSize)
		if c.NSharedExperts == nil || *c.NSharedExperts != 0 {
			sharedN = f.opt("n_shared_experts", c.NSharedExperts, 1)
			sharedFFN = f.opt("moe_shared_expert_intermediate_size", c.MoESharedExpertIntermediateSize, moeFFN)
		}
	}
	maxPos, _ := opt("max_position_embeddings", c.MaxPositionEmbeddings, 0)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if kv == 0 || heads%kv != 0 || topK > E {
		return oomsim.Model{}, fmt.Errorf("num_attention_heads %d, num_key_value_heads %d, experts %d of %d do not fit together", heads, kv, topK, E)
	}
	d := mHeads * mDim
	conv := d + 2*groups*state
	for _, err := range []error{tooMany(L, h, max(d+conv+mHeads, heads*hd+2*kv*hd, ffn, sharedN*sharedFFN+1)), tooMany(L, E, 2*h, max(moeFFN, 1)),
		tooMany(conv, kernel), tooMany(V, h)} {
		if err != nil {
			return oomsim.Model{}, err
		}
	}
	bias := func(b bool, n int64) int64 {
		if b {
			return n
		}
		return 0
	}
	projBias := flag(c.MambaProjBias, false)
	mambaLin := h*(d+conv+mHeads) + d*h
	mamba := mambaLin + conv*kernel + bias(flag(c.UseConvBias, true), conv) + 3*mHeads + d +
		bias(projBias, d+conv+mHeads+h)
	q, k := heads*hd, kv*hd
	attnLin := 2*h*q + 2*h*k
	attn := attnLin + bias(flag(c.AttentionBias, false), q+2*k+h)
	mlpLin := 2 * h * ffn
	mlp := mlpLin + bias(flag(c.MLPBias, false), ffn+h)
	expert := 2 * h * moeFFN
	moeLin := E*expert + sharedN*2*h*sharedFFN + E*h
	var m oomsim.Model
	linear := nM*mambaLin + nA*attnLin + nMLP*mlpLin + nE*moeLin
	m.Params = V*h + L*h + nM*mamba + nA*attn + nMLP*mlp + nE*moeLin + h
	if !flag(c.TieWordEmbeddings, false) {
		m.HeadParams = V * h
		m.Params += m.HeadParams
	}
	if nE > 0 {
		m.ActiveParams = m.Params - nE*(E-topK)*expert
		m.Experts, m.ExpertsPerToken = int(E), int(topK)
	}
	m.UnquantizedParams = m.Params - linear
	m.BufferBytes = hd / 2 * 4
	activeFFN := max(ffn, topK*moeFFN+sharedN*sharedFFN)
	m.Arch = &oomsim.Arch{Layers: int(max((L+1)/2, 1)), KVLayers: int(nA), Hidden: int(h), Heads: int(heads), KVHeads: int(kv),
		HeadDim: int(hd), FFN: int(activeFFN), Vocab: int(V), MaxPositions: int(maxPos), StateValues: nM * mamba2State(mHeads, mDim, state, conv, kernel)}
	m.Notes = append(m.Notes, fmt.Sprintf("nemotron_h: %d Mamba-2, %d attention, %d MLP and %d mixture-of-experts blocks; only the attention blocks keep a KV cache; the activations are planned as %d transformer layers",
		nM, nA, nMLP, nE, m.Arch.Layers))
	return m, nil
}

// mamba2State is what one Mamba-2 layer keeps per sequence while
// generating: its SSM state (heads × head size × state size) and the last
// kernel − 1 inputs of its convolution over x, B and C (conv channels).
func mamba2State(heads, headDim, state, conv, kernel int64) int64 {
	return heads*headDim*state + conv*(kernel-1)
}
