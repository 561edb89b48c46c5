package oomsim

import "fmt"

// SpeculativeMTP drafts with the checkpoint's multi-token-prediction
// layers (vLLM's speculative_config method "mtp", SGLang's
// --speculative-algorithm NEXTN, llama.cpp's MTP draft).
const SpeculativeMTP = "mtp"

// RunsMTP reports whether a stack runs a checkpoint's multi-token-prediction
// layers as the draft of speculative decoding.
func RunsMTP(st Stack) bool {
	return st == StackVLLM || st == StackSGLang || st == StackLlamaCpp
}

// withMTP is the plan with the model's multi-token-prediction layers loaded
// beside it, as speculative decoding runs them (Plan.Speculative):
//   - each layer is a decoder block of the model's (its mixture of experts
//     too) with the projection that joins the next token's embedding to
//     the hidden state (eh_proj, 2·hidden × hidden) and three norms
//     (enorm, hnorm, the shared head's); it reads the model's embeddings
//     and LM head (vLLM's DeepSeekMTP and Qwen3.5 MTP share them). A block
//     is taken at the mean of the model's, which its first dense blocks
//     lower: GLM-5's layer comes to 9.59B against its exact 9.95B (3.7%
//     under), Qwen3.5-35B-A3B's to 0.849B against 0.845B, a small share of
//     the model either way;
//   - each keeps a KV cache like one of the model's attention layers, in
//     the engine's pool beside theirs;
//   - the weights are stored as the model's are.
//
// The plan is unchanged without speculation, or when the model carries no
// such layers (Validate refuses that).
func withMTP(p Plan) (Plan, string) {
	m := p.Model
	a := m.Arch
	if p.Speculative != SpeculativeMTP || m.MTPLayers <= 0 || a == nil || a.Layers <= 0 || a.Hidden <= 0 {
		return p, ""
	}
	n, h := int64(m.MTPLayers), int64(a.Hidden)
	body := m.Params - m.VisionParams - int64(a.Vocab)*h - m.HeadParams
	block := max(body/int64(a.Layers), 0) + 2*h*h + 3*h
	m.Params += n * block
	m.UnquantizedParams += n * 3 * h
	if m.ActiveParams > 0 {
		m.ActiveParams += n * block // the draft runs its block whole: an upper bound
	}
	arch := *a
	arch.KVLayers += int(n)
	m.Arch = &arch
	p.Model = m
	return p, fmt.Sprintf("speculative decoding with the checkpoint's %d multi-token-prediction layer(s) as the draft: %.2fB more parameters beside the model, stored as it is, and %d more layer(s) of KV cache", n, float64(n*block)/1e9, n)
}
