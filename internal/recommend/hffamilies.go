package recommend

import (
	"fmt"
	"slices"

	"github.com/devctl/devctl/internal/oomsim"
)

// decoder is the shape of a decoder-only transformer with what the counters
// need to know about its blocks; count turns it into a Model.
type decoder struct {
	h, L, heads, kv, hd, vocab int64
	tied                       bool
	qkvBias, oBias             bool
	qkNorm                     bool  // per-head RMSNorm on q and k (Qwen3, Gemma 3)
	attnExtra                  int64 // other attention parameters per block (OLMo 2's q/k norms)
	norms                      int64 // norm vectors of size h per block
	normBias                   bool  // LayerNorm with a bias (twice the norm vectors)
	noFinalNorm                bool  // no norm after the last block
	headBias                   bool  // the untied LM head has a bias (Phi, GPT-J)
	positions                  int64 // rows of a learned position table (GPT-Neo, StarCoder)
	// mlp returns block i's MLP: its parameters, the ones a token uses
	// (less for a mixture of experts) and its Linear weights (quantised).
	mlp func(i int64) (params, active, linear int64)
	// activeFFN is the MLP width one token runs through (for activations).
	activeFFN int64
	maxPos    int64
	experts   int64
	topK      int64
	// expertFFN is one routed expert's MLP width (Arch.ExpertFFN).
	expertFFN int64
}

func (d decoder) count() oomsim.Model {
	var m oomsim.Model
	q, k := d.heads*d.hd, d.kv*d.hd
	attnLinear := d.h*q + 2*d.h*k + q*d.h
	attn := attnLinear
	if d.qkvBias {
		attn += q + 2*k
	}
	if d.oBias {
		attn += d.h
	}
	if d.qkNorm {
		attn += 2 * d.hd
	}
	attn += d.attnExtra
	norm := d.norms * d.h
	if d.normBias {
		norm *= 2
	}
	final := d.h
	if d.normBias {
		final *= 2
	}
	if d.noFinalNorm {
		final = 0
	}
	var body, active, linear int64
	for i := range d.L {
		p, a, l := d.mlp(i)
		body += attn + norm + p
		active += attn + norm + a
		linear += attnLinear + l
	}
	emb := d.vocab*d.h + d.positions*d.h
	m.Params = emb + body + final
	m.ActiveParams = emb + active + final
	if !d.tied {
		m.HeadParams = d.vocab * d.h
		if d.headBias {
			m.HeadParams += d.vocab
		}
		m.Params += m.HeadParams
		m.ActiveParams += m.HeadParams
	}
	if d.experts == 0 {
		m.ActiveParams = 0
	}
	m.UnquantizedParams = m.Params - linear
	if d.positions == 0 {
		m.BufferBytes = d.hd / 2 * 4 // rotary inv_freq, fp32
	}
	m.Experts, m.ExpertsPerToken = int(d.experts), int(d.topK)
	m.Arch = &oomsim.Arch{Layers: int(d.L), KVLayers: int(d.L), Hidden: int(d.h), Heads: int(d.heads), KVHeads: int(d.kv),
		HeadDim: int(d.hd), FFN: int(d.activeFFN), ExpertFFN: int(d.expertFFN), Vocab: int(d.vocab), MaxPositions: int(d.maxPos), Gated: d.gated()}
	return m
}

// gated tells a three-matrix MLP from a two-matrix one by what a token
// runs through: about 3·h·ffn parameters against 2·h·ffn.
func (d decoder) gated() bool {
	if d.activeFFN == 0 || d.L == 0 {
		return false
	}
	_, active, _ := d.mlp(0)
	return float64(active) > 2.5*float64(d.h*d.activeFFN)
}

// tooMany refuses dimensions whose product (layers × experts × rows ×
// columns) would pass MaxParams, before any int64 product can wrap round to
// a plausible count.
func tooMany(factors ...int64) error {
	p := 1.0
	for _, f := range factors {
		p *= float64(f)
	}
	if p > MaxParams {
		return fmt.Errorf("these dimensions give more than the %g parameters devctl accepts", float64(MaxParams))
	}
	return nil
}

// dense is a gated (three-matrix) MLP of width ffn, with or without biases.
func dense(h, ffn int64, bias bool) func(int64) (int64, int64, int64) {
	return func(int64) (int64, int64, int64) {
		p := 3 * h * ffn
		if bias {
			p += 2*ffn + h
		}
		return p, p, 3 * h * ffn
	}
}

// countModernDecoder counts the Llama-like families with their differences:
// Qwen3 (q/k norms, explicit head_dim), Phi-3 (fused qkv and gate/up, the
// same count), Gemma 1/2/3 (tied embeddings, head_dim, 4 norms per block
// from Gemma 2, q/k norms in Gemma 3), and the mixtures of experts
// Mixtral and Qwen2/3-MoE, whose every expert is counted (all stay
// resident) and whose active share is reported beside.
func countModernDecoder(c hfConfig, family string) (oomsim.Model, error) {
	var f fields
	d := decoder{norms: 2}
	d.h = f.need("hidden_size", c.HiddenSize)
	d.L = f.need("num_hidden_layers", c.NumHiddenLayers)
	d.heads = f.need("num_attention_heads", c.NumAttentionHeads)
	d.kv = f.opt("num_key_value_heads", c.NumKeyValueHeads, d.heads)
	d.vocab = f.need("vocab_size", c.VocabSize)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if c.HeadDim == nil {
		if err := headsFit(d.heads, d.h, "num_attention_heads", "hidden_size"); err != nil {
			return oomsim.Model{}, err
		}
	}
	d.hd = f.opt("head_dim", c.HeadDim, d.h/d.heads)
	d.maxPos, _ = opt("max_position_embeddings", c.MaxPositionEmbeddings, 0)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if d.heads%d.kv != 0 {
		return oomsim.Model{}, fmt.Errorf("num_attention_heads %d is not a multiple of num_key_value_heads %d", d.heads, d.kv)
	}
	d.tied = flag(c.TieWordEmbeddings, false)
	d.qkvBias = flag(c.AttentionBias, false)
	d.oBias = d.qkvBias
	switch family {
	case "gemma", "gemma2", "gemma3_text":
		d.tied = flag(c.TieWordEmbeddings, true)
		if family != "gemma" {
			d.norms = 4 // pre- and post-norms around attention and the MLP
		}
		d.qkNorm = family == "gemma3_text"
	case "qwen3", "qwen3_moe":
		d.qkNorm = true
	case "qwen2_moe":
		d.qkvBias, d.oBias = true, false
	}
	switch family {
	case "mixtral", "qwen2_moe", "qwen3_moe":
		return d.moe(c, family)
	}
	ffn := f.need("intermediate_size", c.IntermediateSize)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	d.mlp, d.activeFFN = dense(d.h, ffn, flag(c.MLPBias, false)), ffn
	return d.count(), nil
}

// moe counts a mixture-of-experts MLP: every expert's three matrices, the
// router, and Qwen2-MoE's shared expert with its gate; layers listed in
// mlp_only_layers (or off the decoder_sparse_step) stay dense.
func (d decoder) moe(c hfConfig, family string) (oomsim.Model, error) {
	var f fields
	var E, expertFFN, shared int64
	if family == "mixtral" {
		E = f.need("num_local_experts", c.NumLocalExperts)
		expertFFN = f.need("intermediate_size", c.IntermediateSize)
	} else {
		E = f.need("num_experts", c.NumExperts)
		expertFFN = f.need("moe_intermediate_size", c.MoEIntermediateSize)
		if family == "qwen2_moe" {
			shared = f.opt("shared_expert_intermediate_size", c.SharedExpertIntermediateSize, 0)
		}
	}
	topK := f.need("num_experts_per_tok", c.NumExpertsPerTok)
	step := f.opt("decoder_sparse_step", c.DecoderSparseStep, 1)
	denseFFN := f.opt("intermediate_size", c.IntermediateSize, expertFFN)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if topK > E {
		return oomsim.Model{}, fmt.Errorf("num_experts_per_tok %d is more than the %d experts", topK, E)
	}
	if err := tooMany(d.L, E, 3*d.h, max(expertFFN, denseFFN, shared)); err != nil {
		return oomsim.Model{}, err
	}
	h := d.h
	d.experts, d.topK, d.expertFFN = E, topK, expertFFN
	d.activeFFN = topK*expertFFN + shared
	denseMLP := dense(h, denseFFN, false)
	d.mlp = func(i int64) (int64, int64, int64) {
		if slices.Contains(c.MLPOnlyLayers, i) || (i+1)%step != 0 {
			return denseMLP(i)
		}
		one := 3 * h * expertFFN
		p, a, lin := E*one+h*E, topK*one+h*E, E*one
		if shared > 0 {
			p += 3*h*shared + h // the shared expert and its sigmoid gate
			a += 3*h*shared + h
			lin += 3 * h * shared
		}
		return p, a, lin
	}
	return d.count(), nil
}

// countDeepSeek counts DeepSeek-V2/V3: multi-head latent attention (a
// low-rank query path when q_lora_rank is set, a compressed KV path with
// its norm), the first first_k_dense_replace blocks dense, the rest routed
// experts plus shared experts (V3 adds a per-expert score bias). The
// multi-token-prediction block V3 ships for speculative decoding is not
// loaded by transformers and not counted. The shape carries the latent's
// width for engines that cache it (oomsim latentCache).
func countDeepSeek(c hfConfig, family string) (oomsim.Model, error) {
	var f fields
	d := decoder{norms: 2}
	d.h = f.need("hidden_size", c.HiddenSize)
	d.L = f.need("num_hidden_layers", c.NumHiddenLayers)
	d.heads = f.need("num_attention_heads", c.NumAttentionHeads)
	d.kv = f.opt("num_key_value_heads", c.NumKeyValueHeads, d.heads)
	d.vocab = f.need("vocab_size", c.VocabSize)
	kvRank := f.need("kv_lora_rank", c.KVLoraRank)
	nope := f.need("qk_nope_head_dim", c.QKNopeHeadDim)
	rope := f.need("qk_rope_head_dim", c.QKRopeHeadDim)
	vDim := f.need("v_head_dim", c.VHeadDim)
	denseFFN := f.need("intermediate_size", c.IntermediateSize)
	x := readRoutedExperts(c, &f)
	expertFFN, E, nShared, topK, firstDense, freq := x.expertFFN, x.E, x.nShared, x.topK, x.firstDense, x.freq
	var qRank int64
	if c.QLoraRank != nil {
		qRank = f.need("q_lora_rank", c.QLoraRank)
	}
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := x.check(); err != nil {
		return oomsim.Model{}, err
	}
	if err := tooMany(d.L, E+nShared, 3*d.h, max(expertFFN, denseFFN, kvRank+qRank+d.heads*(nope+rope+vDim))); err != nil {
		return oomsim.Model{}, err
	}
	d.maxPos, _ = opt("max_position_embeddings", c.MaxPositionEmbeddings, 0)
	d.tied = flag(c.TieWordEmbeddings, false)
	h, H := d.h, d.heads
	qk := nope + rope
	var attn int64
	if qRank > 0 {
		attn += h*qRank + qRank + qRank*H*qk // q_a_proj, q_a_layernorm, q_b_proj
	} else {
		attn += h * H * qk
	}
	attn += h*(kvRank+rope) + kvRank + kvRank*H*(nope+vDim) + H*vDim*h
	attnLinear := attn - kvRank
	if qRank > 0 {
		attnLinear -= qRank
	}
	d.experts, d.topK = E, topK
	d.activeFFN = (topK + nShared) * expertFFN
	d.expertFFN = expertFFN
	biasPerExpert := int64(0)
	if family == "deepseek_v3" || c.TopKMethod == "noaux_tc" {
		biasPerExpert = 1 // e_score_correction_bias
	}
	// The decoder's attention is replaced wholesale: heads×hd stands for
	// the KV cache and activations (the cache of transformers; latentCache has the compressed one).
	d.hd = vDim
	d.kv = H
	mlp := func(i int64) (int64, int64, int64) {
		if i < firstDense || (i-firstDense)%freq != 0 {
			p := 3 * h * denseFFN
			return p, p, p
		}
		one := 3 * h * expertFFN
		p := E*one + h*E + biasPerExpert*E + nShared*one
		a := topK*one + h*E + biasPerExpert*E + nShared*one
		return p, a, (E + nShared) * one
	}
	var body, active, linear int64
	for i := range d.L {
		p, a, l := mlp(i)
		body += attn + 2*h + p
		active += attn + 2*h + a
		linear += attnLinear + l
	}
	var m oomsim.Model
	emb := d.vocab * h
	m.Params = emb + body + h
	m.ActiveParams = emb + active + h
	if !d.tied {
		m.HeadParams = emb
		m.Params += emb
		m.ActiveParams += emb
	}
	m.UnquantizedParams = m.Params - linear
	m.Experts, m.ExpertsPerToken = int(E), int(topK)
	m.Notes = append(m.Notes, family+": multi-head latent attention; engines that cache the compressed latent (vLLM, SGLang, TensorRT-LLM, llama.cpp) keep kv_lora_rank + qk_rope_head_dim values per token and layer, the others every head's keys and values; V3's multi-token-prediction block is not counted")
	m.Arch = &oomsim.Arch{Layers: int(d.L), KVLayers: int(d.L), Hidden: int(h), Heads: int(H), KVHeads: int(H),
		HeadDim: int(vDim), FFN: int(d.activeFFN), ExpertFFN: int(d.expertFFN), Vocab: int(d.vocab), MaxPositions: int(d.maxPos),
		LatentKV: int(kvRank + rope), LatentRank: int(kvRank)}
	return m, nil
}

// countFalcon counts FalconForCausalLM: fused query_key_value (multi-query
// for 7B, grouped for the new decoder architecture of 40B/180B), a
// 4h MLP without gate, LayerNorms with biases (one per block, two for the
// new architecture), embeddings tied to the head.
func countFalcon(c hfConfig) (oomsim.Model, error) {
	var f fields
	h := f.need("hidden_size", c.HiddenSize)
	L := f.need("num_hidden_layers", c.NumHiddenLayers)
	H := f.need("num_attention_heads", c.NumAttentionHeads)
	V := f.need("vocab_size", c.VocabSize)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := headsFit(H, h, "num_attention_heads", "hidden_size"); err != nil {
		return oomsim.Model{}, err
	}
	hd := h / H
	newArch := flag(c.NewDecoderArchitecture, false)
	kv := H
	switch {
	case newArch:
		kv = f.opt("num_kv_heads", c.NumKVHeads, H)
	case flag(c.MultiQuery, true):
		kv = 1
	}
	ffn := f.opt("ffn_hidden_size", nil, 4*h)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	bias := flag(c.Bias, false)
	qkv := h * (H*hd + 2*kv*hd)
	linear := qkv + h*h + 2*h*ffn
	per := linear
	if bias {
		per += H*hd + 2*kv*hd + h + ffn + h
	}
	lns := int64(1)
	if newArch {
		lns = 2
	}
	per += lns * 2 * h
	var m oomsim.Model
	m.Params = V*h + L*per + 2*h
	if !flag(c.TieWordEmbeddings, true) {
		m.HeadParams = V * h
		m.Params += m.HeadParams
	}
	m.UnquantizedParams = m.Params - L*linear
	m.Arch = &oomsim.Arch{Layers: int(L), KVLayers: int(L), Hidden: int(h), Heads: int(H), KVHeads: int(kv), HeadDim: int(hd), FFN: int(ffn), Vocab: int(V)}
	return m, nil
}

// countNeoX counts GPTNeoXForCausalLM (Pythia, GPT-NeoX-20B): fused qkv and
// every Linear with biases, two LayerNorms per block, an untied output
// embedding (embed_out).
func countNeoX(c hfConfig) (oomsim.Model, error) {
	var f fields
	h := f.need("hidden_size", c.HiddenSize)
	L := f.need("num_hidden_layers", c.NumHiddenLayers)
	H := f.need("num_attention_heads", c.NumAttentionHeads)
	ffn := f.need("intermediate_size", c.IntermediateSize)
	V := f.need("vocab_size", c.VocabSize)
	maxPos, _ := opt("max_position_embeddings", c.MaxPositionEmbeddings, 0)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := headsFit(H, h, "num_attention_heads", "hidden_size"); err != nil {
		return oomsim.Model{}, err
	}
	linear := 3*h*h + h*h + 2*h*ffn
	per := linear + 3*h + h + ffn + h + 2*2*h
	var m oomsim.Model
	m.Params = V*h + L*per + 2*h
	if !flag(c.TieWordEmbeddings, false) {
		m.HeadParams = V * h
		m.Params += m.HeadParams
	}
	m.UnquantizedParams = m.Params - L*linear
	m.Arch = &oomsim.Arch{Layers: int(L), KVLayers: int(L), Hidden: int(h), Heads: int(H), KVHeads: int(H), HeadDim: int(h / H), FFN: int(ffn), Vocab: int(V), MaxPositions: int(maxPos)}
	return m, nil
}

// countOPT counts OPTForCausalLM: learned positions (with OPT's offset of
// 2), biases everywhere, a final LayerNorm when layer norm comes first, the
// input/output projections of OPT-350m, and a head tied to the embedding.
func countOPT(c hfConfig) (oomsim.Model, error) {
	var f fields
	h := f.need("hidden_size", c.HiddenSize)
	L := f.need("num_hidden_layers", c.NumHiddenLayers)
	H := f.need("num_attention_heads", c.NumAttentionHeads)
	ffn := f.need("ffn_dim", c.FFNDim)
	V := f.need("vocab_size", c.VocabSize)
	P := f.need("max_position_embeddings", c.MaxPositionEmbeddings)
	proj := f.opt("word_embed_proj_dim", c.WordEmbedProjDim, h)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := headsFit(H, h, "num_attention_heads", "hidden_size"); err != nil {
		return oomsim.Model{}, err
	}
	linear := 4*h*h + 2*h*ffn
	per := linear
	if flag(c.EnableBias, true) {
		per += 4*h + ffn + h
	}
	per += 2 * 2 * h
	var m oomsim.Model
	m.Params = V*proj + (P+2)*h + L*per
	if proj != h {
		m.Params += 2 * h * proj // project_in and project_out, no bias
	}
	if flag(c.DoLayerNormBefore, true) && proj == h {
		m.Params += 2 * h
	}
	if !flag(c.TieWordEmbeddings, true) {
		m.HeadParams = V * proj
		m.Params += m.HeadParams
	}
	m.UnquantizedParams = m.Params - L*linear
	m.Arch = &oomsim.Arch{Layers: int(L), KVLayers: int(L), Hidden: int(h), Heads: int(H), KVHeads: int(H), HeadDim: int(h / H), FFN: int(ffn), Vocab: int(V), MaxPositions: int(P)}
	return m, nil
}

// countBLOOM counts BloomForCausalLM: an embedding LayerNorm, fused qkv,
// a 4h MLP, biases everywhere, ALiBi (no position parameters), tied head.
func countBLOOM(c hfConfig) (oomsim.Model, error) {
	var f fields
	hp := c.HiddenSize
	if hp == nil {
		hp = c.NEmbedBloom
	}
	lp := c.NumHiddenLayers
	if lp == nil {
		lp = c.NLayer
	}
	headsP := c.NumAttentionHeads
	if headsP == nil {
		headsP = c.NHead
	}
	h := f.need("hidden_size", hp)
	L := f.need("num_hidden_layers", lp)
	H := f.need("num_attention_heads", headsP)
	V := f.need("vocab_size", c.VocabSize)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := headsFit(H, h, "num_attention_heads", "hidden_size"); err != nil {
		return oomsim.Model{}, err
	}
	linear := 3*h*h + h*h + 2*h*4*h
	per := linear + 3*h + h + 4*h + h + 2*2*h
	var m oomsim.Model
	m.Params = V*h + 2*h + L*per + 2*h
	m.UnquantizedParams = m.Params - L*linear
	m.Arch = &oomsim.Arch{Layers: int(L), KVLayers: int(L), Hidden: int(h), Heads: int(H), KVHeads: int(H), HeadDim: int(h / H), FFN: int(4 * h), Vocab: int(V)}
	return m, nil
}

// countWhisper counts WhisperForConditionalGeneration: two convolutions
// over the mel bins and the encoder's position table, encoder blocks
// (self-attention; k_proj has no bias), decoder blocks (self- and
// cross-attention), learned decoder positions, final LayerNorms, and the
// output projection tied to the token embedding.
func countWhisper(c hfConfig) (oomsim.Model, error) {
	var f fields
	d := f.need("d_model", c.DModel)
	enc := f.need("encoder_layers", c.EncoderLayers)
	dec := f.need("decoder_layers", c.DecoderLayers)
	encFFN := f.need("encoder_ffn_dim", c.EncoderFFNDim)
	decFFN := f.need("decoder_ffn_dim", c.DecoderFFNDim)
	H := f.need("encoder_attention_heads", c.EncoderAttentionHeads)
	V := f.need("vocab_size", c.VocabSize)
	mels := f.opt("num_mel_bins", c.NumMelBins, 80)
	src := f.opt("max_source_positions", c.MaxSourcePositions, 1500)
	tgt := f.opt("max_target_positions", c.MaxTargetPositions, 448)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := headsFit(H, d, "encoder_attention_heads", "d_model"); err != nil {
		return oomsim.Model{}, err
	}
	attnLinear := 4 * d * d
	attn := attnLinear + 3*d // q, v and out_proj have biases, k_proj none
	ln := 2 * d
	mlp := func(ffn int64) int64 { return 2*d*ffn + ffn + d }
	encLayer := attn + ln + mlp(encFFN) + ln
	decLayer := 2*(attn+ln) + mlp(decFFN) + ln
	conv := mels*d*3 + d + d*d*3 + d
	var m oomsim.Model
	m.Params = conv + src*d + enc*encLayer + ln + V*d + tgt*d + dec*decLayer + ln
	m.UnquantizedParams = m.Params - enc*(attnLinear+2*d*encFFN) - dec*(2*attnLinear+2*d*decFFN)
	m.Arch = &oomsim.Arch{Layers: int(enc + dec), KVLayers: int(2 * dec), Hidden: int(d), Heads: int(H), KVHeads: int(H), HeadDim: int(d / H), FFN: int(decFFN), Vocab: int(V), MaxPositions: int(tgt)}
	return m, nil
}

// plain is a two-matrix MLP (up, activation, down) of width ffn, the
// GPT-2 shape, with or without biases.
func plain(h, ffn int64, bias bool) func(int64) (int64, int64, int64) {
	return func(int64) (int64, int64, int64) {
		p := 2 * h * ffn
		if bias {
			p += ffn + h
		}
		return p, p, 2 * h * ffn
	}
}

// shapedDecoder is where most counters start: standardShape, the heads
// checked against head_dim, and the MLP width. Callers read their own
// fields into f and check f.err.
func shapedDecoder(c hfConfig, f *fields) (decoder, int64, error) {
	d := standardShape(c, f)
	if err := d.checkHeads(c, f); err != nil {
		return d, 0, err
	}
	return d, f.need("intermediate_size", c.IntermediateSize), nil
}

// readDecoder is shapedDecoder for the counters that read no other field
// through fields: the first missing or bad field is its error.
func readDecoder(c hfConfig) (decoder, int64, error) {
	var f fields
	d, ffn, err := shapedDecoder(c, &f)
	if err == nil {
		err = f.err
	}
	return d, ffn, err
}

// standardShape reads the Llama-style dimensions most decoders share.
func standardShape(c hfConfig, f *fields) decoder {
	d := decoder{}
	d.h = f.need("hidden_size", c.HiddenSize)
	d.L = f.need("num_hidden_layers", c.NumHiddenLayers)
	d.heads = f.need("num_attention_heads", c.NumAttentionHeads)
	d.kv = f.opt("num_key_value_heads", c.NumKeyValueHeads, d.heads)
	d.vocab = f.need("vocab_size", c.VocabSize)
	d.maxPos, _ = opt("max_position_embeddings", c.MaxPositionEmbeddings, 0)
	return d
}

// checkHeads derives the head size and refuses heads that do not fit.
func (d *decoder) checkHeads(c hfConfig, f *fields) error {
	if f.err != nil {
		return f.err
	}
	if c.HeadDim == nil {
		if err := headsFit(d.heads, d.h, "num_attention_heads", "hidden_size"); err != nil {
			return err
		}
	}
	d.hd = f.opt("head_dim", c.HeadDim, d.h/d.heads)
	if f.err != nil {
		return f.err
	}
	if d.heads%d.kv != 0 {
		return fmt.Errorf("num_attention_heads %d is not a multiple of num_key_value_heads %d", d.heads, d.kv)
	}
	return nil
}

// countPhi counts PhiForCausalLM (Phi-1, Phi-1.5, Phi-2): one LayerNorm
// with a bias per block feeding attention and the MLP in parallel, biases
// on q, k, v and the output projection ("dense"), a two-matrix GELU MLP
// with biases, optional per-head LayerNorms on q and k, a final LayerNorm,
// and an untied head with a bias.
func countPhi(c hfConfig) (oomsim.Model, error) {
	d, ffn, err := readDecoder(c)
	if err != nil {
		return oomsim.Model{}, err
	}
	d.norms, d.normBias = 1, true
	d.qkvBias, d.oBias = true, true
	if flag(c.QKLayernorm, false) {
		d.attnExtra = 2 * 2 * d.hd // LayerNorm(head_dim) with a bias, on q and on k
	}
	d.tied = flag(c.TieWordEmbeddings, false)
	d.headBias = true
	d.mlp, d.activeFFN = plain(d.h, ffn, true), ffn
	return d.count(), nil
}

// countBigCode counts GPTBigCodeForCausalLM (SantaCoder, StarCoder): GPT-2
// with multi-query attention (one key/value head unless multi_query is
// false), learned positions, biases everywhere, a head tied to wte.
func countBigCode(c hfConfig) (oomsim.Model, error) {
	var f fields
	d := decoder{norms: 2, normBias: true, qkvBias: true, oBias: true, tied: true}
	d.h = f.need("n_embd", c.NEmbd)
	d.L = f.need("n_layer", c.NLayer)
	d.heads = f.need("n_head", c.NHead)
	d.vocab = f.need("vocab_size", c.VocabSize)
	d.positions = f.need("n_positions", c.NPositions)
	inner := f.opt("n_inner", c.NInner, 4*d.h)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := headsFit(d.heads, d.h, "n_head", "n_embd"); err != nil {
		return oomsim.Model{}, err
	}
	d.hd, d.kv, d.maxPos = d.h/d.heads, d.heads, d.positions
	if flag(c.MultiQuery, true) {
		d.kv = 1
	}
	d.mlp, d.activeFFN = plain(d.h, inner, true), inner
	return d.count(), nil
}

// countGPTNeo counts GPTNeoForCausalLM: learned positions, q/k/v without
// biases and an output projection with one, two LayerNorms per block, a
// GELU MLP with biases, a tied head. The per-layer causal-mask buffers are
// not counted.
func countGPTNeo(c hfConfig) (oomsim.Model, error) {
	var f fields
	d := decoder{norms: 2, normBias: true, oBias: true, tied: true}
	d.h = f.need("hidden_size", c.HiddenSize)
	d.L = f.need("num_layers", c.NumLayers)
	d.heads = f.need("num_heads", c.NumHeads)
	d.vocab = f.need("vocab_size", c.VocabSize)
	d.positions = f.need("max_position_embeddings", c.MaxPositionEmbeddings)
	inner := f.opt("intermediate_size", c.IntermediateSize, 4*d.h)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := headsFit(d.heads, d.h, "num_heads", "hidden_size"); err != nil {
		return oomsim.Model{}, err
	}
	d.hd, d.kv, d.maxPos = d.h/d.heads, d.heads, d.positions
	d.mlp, d.activeFFN = plain(d.h, inner, true), inner
	return d.count(), nil
}

// countGPTJ counts GPTJForCausalLM: rotary positions, one LayerNorm per
// block feeding attention and the MLP in parallel, q/k/v/out without
// biases, a GELU MLP with biases, an untied head with a bias.
func countGPTJ(c hfConfig) (oomsim.Model, error) {
	var f fields
	d := decoder{norms: 1, normBias: true}
	d.h = f.need("n_embd", c.NEmbd)
	d.L = f.need("n_layer", c.NLayer)
	d.heads = f.need("n_head", c.NHead)
	d.vocab = f.need("vocab_size", c.VocabSize)
	d.maxPos, _ = opt("n_positions", c.NPositions, 0)
	inner := f.opt("n_inner", c.NInner, 4*d.h)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := headsFit(d.heads, d.h, "n_head", "n_embd"); err != nil {
		return oomsim.Model{}, err
	}
	d.hd, d.kv = d.h/d.heads, d.heads
	d.tied = flag(c.TieWordEmbeddings, false)
	d.headBias = true
	d.mlp, d.activeFFN = plain(d.h, inner, true), inner
	return d.count(), nil
}

// countNormVariant counts Llama-shaped decoders (gated MLP without biases,
// untied head by default) that differ in their norms and biases:
// StableLM (LayerNorms with biases, one per block when the residual is
// parallel, optional q/k/v biases and per-head q/k LayerNorms), OLMo 2
// (norms after attention and after the MLP, RMSNorms over the whole q and
// k projections), InternLM2 (fused wqkv, the same count; "bias" on the
// attention projections, true by default).
func countNormVariant(c hfConfig, family string) (oomsim.Model, error) {
	d, ffn, err := readDecoder(c)
	if err != nil {
		return oomsim.Model{}, err
	}
	d.norms = 2
	d.tied = flag(c.TieWordEmbeddings, false)
	switch family {
	case "stablelm":
		d.normBias = true
		if flag(c.UseParallelResidual, false) {
			d.norms = 1
		}
		d.qkvBias = flag(c.UseQKVBias, false)
		if flag(c.QKLayernorm, false) {
			d.attnExtra = (d.heads + d.kv) * d.hd // LayerNorm(head_dim) per head, no bias
		}
	case "olmo2":
		d.qkvBias = flag(c.AttentionBias, false)
		d.oBias = d.qkvBias
		d.attnExtra = (d.heads + d.kv) * d.hd
	case "internlm2":
		d.qkvBias = flag(c.Bias, true)
		d.oBias = d.qkvBias
	}
	d.mlp, d.activeFFN = dense(d.h, ffn, false), ffn
	return d.count(), nil
}

// countChatGLM counts ChatGLMForConditionalGeneration (ChatGLM2/3,
// GLM-4-9B as THUDM ships it): fused query_key_value with grouped keys and
// values (multi_query_group_num groups of kv_channels), biases on it when
// add_qkv_bias or add_bias_linear, a gated MLP of ffn_hidden_size,
// RMSNorms (LayerNorms when rmsnorm is false), a final norm unless
// post_layer_norm is false, and an untied output layer over the padded
// vocabulary.
func countChatGLM(c hfConfig) (oomsim.Model, error) {
	if c.PaddedVocabSize == nil && c.InnerHiddenSize != nil {
		return countGLM1(c)
	}
	var f fields
	d := decoder{norms: 2}
	d.h = f.need("hidden_size", c.HiddenSize)
	d.L = f.need("num_layers", c.NumLayers)
	d.heads = f.need("num_attention_heads", c.NumAttentionHeads)
	d.vocab = f.need("padded_vocab_size", c.PaddedVocabSize)
	ffn := f.need("ffn_hidden_size", c.FFNHiddenSize)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if c.KVChannels == nil {
		if err := headsFit(d.heads, d.h, "num_attention_heads", "hidden_size"); err != nil {
			return oomsim.Model{}, err
		}
	}
	d.hd = f.opt("kv_channels", c.KVChannels, d.h/d.heads)
	d.kv = d.heads
	if flag(c.MultiQueryAttention, false) {
		d.kv = f.need("multi_query_group_num", c.MultiQueryGroupNum)
	}
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if d.heads%d.kv != 0 {
		return oomsim.Model{}, fmt.Errorf("num_attention_heads %d is not a multiple of multi_query_group_num %d", d.heads, d.kv)
	}
	biasLinear := flag(c.AddBiasLinear, false)
	d.qkvBias = biasLinear || flag(c.AddQKVBias, false)
	d.oBias = biasLinear
	d.normBias = !flag(c.RMSNorm, true)
	d.noFinalNorm = !flag(c.PostLayerNorm, true)
	d.mlp, d.activeFFN = dense(d.h, ffn, biasLinear), ffn
	return d.count(), nil
}

// countRefinedWeb counts Falcon checkpoints that still carry the remote-code
// config of their first release: model_type RefinedWebModel (Falcon-7B:
// multi-query, one LayerNorm per block) or RefinedWeb (Falcon-40B: the new
// decoder architecture, n_head_kv key/value heads, two LayerNorms), with
// n_layer and n_head for the layer and head counts. The weights are the
// ones FalconForCausalLM loads, so the count is countFalcon's.
func countRefinedWeb(c hfConfig, family string) (oomsim.Model, error) {
	if c.NumHiddenLayers == nil {
		c.NumHiddenLayers = c.NLayer
	}
	if c.NumAttentionHeads == nil {
		c.NumAttentionHeads = c.NHead
	}
	if c.NumKVHeads == nil {
		c.NumKVHeads = c.NHeadKV
	}
	if c.NewDecoderArchitecture == nil {
		newArch := family == "refinedweb"
		c.NewDecoderArchitecture = &newArch
	}
	return countFalcon(c)
}

// countQwen counts QWenLMHeadModel, the first Qwen generation (Qwen-1.8B to
// Qwen-72B, remote code): a fused c_attn with a bias, c_proj and a SwiGLU
// MLP (w1, w2, c_proj) of half the configured intermediate size, all
// without biases while no_bias holds, RMSNorms, an untied lm_head. The
// earliest Qwen-7B configs name the same numbers n_embd, n_layer, n_head,
// ffn_hidden_size and padded_vocab_size.
func countQwen(c hfConfig) (oomsim.Model, error) {
	first := func(a, b *int64) *int64 {
		if a != nil {
			return a
		}
		return b
	}
	var f fields
	d := decoder{norms: 2, qkvBias: true}
	d.h = f.need("hidden_size", first(c.HiddenSize, c.NEmbd))
	d.L = f.need("num_hidden_layers", first(c.NumHiddenLayers, c.NLayer))
	d.heads = f.need("num_attention_heads", first(c.NumAttentionHeads, c.NHead))
	d.vocab = f.need("vocab_size", first(c.VocabSize, c.PaddedVocabSize))
	ffn := f.need("intermediate_size", first(c.IntermediateSize, c.FFNHiddenSize))
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if c.KVChannels == nil {
		if err := headsFit(d.heads, d.h, "num_attention_heads", "hidden_size"); err != nil {
			return oomsim.Model{}, err
		}
	}
	d.hd = f.opt("kv_channels", c.KVChannels, d.h/d.heads)
	d.maxPos, _ = opt("seq_length", first(c.SeqLength, c.MaxPositionEmbeddings), 0)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if ffn < 2 {
		return oomsim.Model{}, fmt.Errorf("intermediate_size %d is less than 2 (the MLP is half of it)", ffn)
	}
	d.kv = d.heads
	bias := !flag(c.NoBias, true)
	d.oBias = bias
	d.tied = flag(c.TieWordEmbeddings, false)
	d.mlp, d.activeFFN = dense(d.h, ffn/2, bias), ffn/2
	return d.count(), nil
}

// countGLM1 counts ChatGLM-6B, the first generation, whose config.json
// shares model_type chatglm with ChatGLM2/3 but names its MLP width
// inner_hidden_size and has no padded_vocab_size: GLM blocks with
// LayerNorms (with biases), a fused query_key_value and a dense output,
// both with biases, a two-matrix GELU MLP with biases, a final LayerNorm,
// and an lm_head tied to the word embeddings (the config sets no
// tie_word_embeddings, so transformers' default ties them).
func countGLM1(c hfConfig) (oomsim.Model, error) {
	var f fields
	d := decoder{norms: 2, normBias: true, qkvBias: true, oBias: true}
	d.h = f.need("hidden_size", c.HiddenSize)
	d.L = f.need("num_layers", c.NumLayers)
	d.heads = f.need("num_attention_heads", c.NumAttentionHeads)
	d.vocab = f.need("vocab_size", c.VocabSize)
	inner := f.need("inner_hidden_size", c.InnerHiddenSize)
	d.maxPos, _ = opt("max_sequence_length", c.MaxSequenceLength, 0)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := headsFit(d.heads, d.h, "num_attention_heads", "hidden_size"); err != nil {
		return oomsim.Model{}, err
	}
	d.hd, d.kv = d.h/d.heads, d.heads
	d.tied = flag(c.TieWordEmbeddings, true)
	d.mlp, d.activeFFN = plain(d.h, inner, true), inner
	return d.count(), nil
}

// routedExperts is the DeepSeekMoE layout of a config (DeepSeek-V2/V3,
// GLM-4.5, DeepSeek-VL2): n_routed_experts experts of
// moe_intermediate_size, n_shared_experts shared ones, top-k routing, the
// first first_k_dense_replace blocks dense and every moe_layer_freq-th
// block after them a mixture.
type routedExperts struct{ expertFFN, E, nShared, topK, firstDense, freq int64 }

func readRoutedExperts(c hfConfig, f *fields) routedExperts {
	return routedExperts{
		expertFFN:  f.need("moe_intermediate_size", c.MoEIntermediateSize),
		E:          f.need("n_routed_experts", c.NRoutedExperts),
		nShared:    f.opt("n_shared_experts", c.NSharedExperts, 0),
		topK:       f.need("num_experts_per_tok", c.NumExpertsPerTok),
		firstDense: f.opt("first_k_dense_replace", c.FirstKDenseReplace, 0),
		freq:       f.opt("moe_layer_freq", c.MoELayerFreq.step(f), 1),
	}
}

// check refuses a top-k larger than the experts it picks from.
func (x routedExperts) check() error {
	if x.topK > x.E {
		return fmt.Errorf("num_experts_per_tok %d is more than the %d experts", x.topK, x.E)
	}
	return nil
}
