package oomsim

import (
	"fmt"

	"github.com/devctl/devctl/internal/capability"
)

// ExLlama (ExLlamaV2 and V3, and the servers built on them: TabbyAPI,
// text-generation-webui's ExLlamav2 loader) runs EXL2/EXL3 files: every
// Linear of the blocks at the file's average bits per weight, the output
// head at its own width, the input embedding in host memory. It prefills a
// prompt max_input_len (2048) tokens at a time and holds, beside the
// weights and the cache it allocates for max_seq_len at load, one scratch
// buffer per device sized for its largest module (turboderp-org/exllamav2:
// config.py, model.py, linear.py, mlp.py).
const (
	// exllamaChunk is ExLlamaV2Config.max_input_len: "sequences longer
	// than this will be processed in multiple steps" (TabbyAPI's
	// chunk_size has the same default).
	exllamaChunk = 2048
	// exllamaHeadBits is the output head's width in an EXL2 file unless
	// the converter was told otherwise (convert.py --head_bits, default
	// 6; EXL3's likewise).
	exllamaHeadBits = 6
)

// exllamaWeights is what an EXL2/EXL3 model holds on the devices: the
// blocks' Linear layers at the plan's bits per weight (--weight-bits, the
// file's "bpw"), the output head at exllamaHeadBits, norms and a vision
// tower in 16 bits; the input embedding stays in host memory (model.py:
// "Embedding layer on CPU"), a tied one too, since the head is stored as
// its own quantised matrix. ok is false for other stacks, unquantised
// weights and models without a shape.
func exllamaWeights(m Model, p Plan) (bytes int64, ok bool) {
	a := m.Arch
	if !p.Stack.ExLlama() || a == nil || a.Vocab <= 0 || a.Hidden <= 0 || (p.Precision != capability.Int4 && p.Precision != capability.Int8) {
		return 0, false
	}
	bits := p.WeightBits
	if bits <= 0 {
		bits = quantBits(p.Precision, QuantGPTQ, m)
	}
	table := float64(a.Vocab) * float64(a.Hidden)
	blocks := float64(m.Params-m.VisionParams-m.HeadParams) - table
	return sat(max(blocks, 0)*bits/8 + table*exllamaHeadBits/8 + 2*float64(m.VisionParams)), true
}

// exllamaScratch is the scratch buffer ExLlama reserves on a device for
// its largest module, and a note saying what it holds: the output head's,
// which dequantises the head to fp16 (temp_dq_size: in × out × 2 bytes)
// and writes a chunk's logits in fp32 (temp_fwd_size: out ×
// max_input_len × 4), or an MLP's dequantised widest matrix where that is
// larger. 0 for other stacks and for ExLlamaV3, whose EXL3 loads hold no
// such buffer.
func exllamaScratch(s settings, a *Arch) (int64, string) {
	if s.p.Stack != StackExLlama || a == nil {
		return 0, ""
	}
	chunk := prefillChunk(s.p)
	vocab, hidden := float64(a.Vocab), float64(a.Hidden)
	head := 2*vocab*hidden + 4*vocab*float64(chunk)
	mlp := 2 * hidden * float64(max(a.FFN, a.ExpertFFN))
	what := fmt.Sprintf("the output head's weights dequantised to fp16 and a %d-token chunk's fp32 logits", chunk)
	if mlp > head {
		what = "an MLP's widest matrix dequantised to fp16"
	}
	scratch := sat(max(head, mlp))
	return scratch, fmt.Sprintf("ExLlamaV2 reserves one scratch buffer per device for its largest module: %s, %s", what, fmtGiB(scratch))
}
