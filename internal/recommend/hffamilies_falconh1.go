package recommend

import (
	"encoding/json"
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfFalconH1 holds the config.json fields of Falcon-H1 that no other family
// reads (embedded in hfConfig; its other Mamba fields are hfMambaHybrid's
// and hfConfig2026's). mamba_d_ssm may be null: then mamba_expand ×
// hidden_size.
type hfFalconH1 struct {
	MambaDSSM      json.RawMessage `json:"mamba_d_ssm"`
	MambaRMSNorm   *bool           `json:"mamba_rms_norm"`
	ProjectorsBias *bool           `json:"projectors_bias"`
}

// countFalconH1 counts FalconH1ForCausalLM (TII's Falcon-H1, model_type
// falcon_h1) as transformers' modeling_falcon_h1.py builds it. Every layer
// runs grouped-query attention and a Mamba-2 mixer side by side on the same
// normed input, then a SwiGLU MLP:
//
//   - attention: q, k, v and o of head_dim (biases with attention_bias);
//   - the mixer over d = mamba_d_ssm channels (mamba_expand × hidden_size
//     when null): in_proj from hidden to the gate, x, B and C
//     (mamba_n_groups × mamba_d_state each) and one dt per mamba_n_heads
//     head (a bias with mamba_proj_bias); a depthwise Conv1d of
//     mamba_d_conv taps over x, B and C (a bias with mamba_conv_bias);
//     dt_bias, A_log and D per head; a gated RMSNorm of d only with
//     mamba_rms_norm; out_proj back (a bias with projectors_bias);
//   - gate, up and down of intermediate_size (biases with mlp_bias);
//
// two RMSNorms a layer, a final one, and the head (untied unless
// tie_word_embeddings). The μP multipliers are scalars, and mup_vector a
// non-persistent buffer, not parameters. Left out, FalconH1Config's
// defaults apply: 128 Mamba heads, 1 group, a state of 256, a kernel of 4,
// mamba_d_ssm 1024. Falcon-H1-0.5B-Base counts 521,411,104, the Hub's
// count.
//
// Every layer keeps a KV cache; the Mamba state beside it is a fixed size
// per sequence and not planned.
func countFalconH1(c hfConfig) (oomsim.Model, error) {
	var f fields
	d, ffn, err := shapedDecoder(c, &f)
	if err != nil {
		return oomsim.Model{}, err
	}
	mHeads := f.opt("mamba_n_heads", c.MambaNHeads, 128)
	groups := f.opt("mamba_n_groups", c.MambaNGroups, 1)
	state := f.opt("mamba_d_state", c.MambaDState, 256)
	kernel := f.opt("mamba_d_conv", c.MambaDConv, 4)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	h := d.h
	var dSSM int64
	switch raw := c.MambaDSSM; {
	case len(raw) == 0:
		dSSM = 1024
	case string(raw) == "null":
		expand := f.opt("mamba_expand", c.MambaExpand, 2)
		if f.err != nil {
			return oomsim.Model{}, f.err
		}
		if err := tooMany(expand, h); err != nil {
			return oomsim.Model{}, err
		}
		dSSM = expand * h
	default:
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil {
			return oomsim.Model{}, fmt.Errorf("mamba_d_ssm is %s: want a number or null", raw)
		}
		dSSM = f.need("mamba_d_ssm", &n)
	}
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	conv := dSSM + 2*groups*state
	inProj := dSSM + conv + mHeads
	q, k := d.heads*d.hd, d.kv*d.hd
	for _, err := range []error{tooMany(d.L, h, max(inProj+dSSM, 2*(q+k), 3*ffn)), tooMany(conv, kernel), tooMany(d.vocab, h)} {
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
	attnLinear := 2*h*q + 2*h*k
	attn := attnLinear + bias(flag(c.AttentionBias, false), q+2*k+h)
	mambaLinear := h*inProj + dSSM*h
	mamba := mambaLinear + bias(flag(c.MambaProjBias, false), inProj) + conv*kernel + bias(flag(c.MambaConvBias, true), conv) +
		3*mHeads + bias(flag(c.MambaRMSNorm, false), dSSM) + bias(flag(c.ProjectorsBias, false), h)
	mlpLinear := 3 * h * ffn
	mlp := mlpLinear + bias(flag(c.MLPBias, false), 2*ffn+h)
	var m oomsim.Model
	m.Params = d.vocab*h + d.L*(attn+mamba+mlp+2*h) + h
	if !flag(c.TieWordEmbeddings, false) {
		m.HeadParams = d.vocab * h
		m.Params += m.HeadParams
	}
	m.UnquantizedParams = m.Params - d.L*(attnLinear+mambaLinear+mlpLinear)
	m.BufferBytes = d.hd / 2 * 4 // rotary inv_freq, fp32
	m.Arch = &oomsim.Arch{Layers: int(d.L), KVLayers: int(d.L), Hidden: int(h), Heads: int(d.heads), KVHeads: int(d.kv),
		HeadDim: int(d.hd), FFN: int(ffn), Vocab: int(d.vocab), MaxPositions: int(d.maxPos), Gated: true}
	m.Notes = append(m.Notes, fmt.Sprintf("falcon_h1: each of the %d layers runs attention and a Mamba-2 mixer (%d heads, d_ssm %d) side by side; every layer keeps a KV cache, and the Mamba state beside it is a fixed size per sequence and not planned",
		d.L, mHeads, dSSM))
	return m, nil
}
