package oomsim

import (
	"strings"

	"github.com/devctl/devctl/internal/capability"
)

// ggufTypeBits are bits per weight of llama.cpp's quantisation types, as
// llama-quantize lists them (tools/quantize/quantize.cpp QUANT_OPTIONS):
// the IQ types' stated rates, and for the K-quant mixes and legacy types
// the Llama-3-8B file size it prints in GiB over the model's 8.03B
// parameters (Q8_0 7.96G: 8.5 bits); MXFP4 4 bits plus an 8-bit scale per
// 32 (4.25). Q4_K_M is the planner's rate for a 4-bit GGUF file, 4.85
// (llama-quantize's 4.58G gives 4.90).
var ggufTypeBits = map[string]float64{
	"iq1_s": 1.56, "iq1_m": 1.75, "iq2_xxs": 2.06, "iq2_xs": 2.31, "iq2_s": 2.5, "iq2_m": 2.7,
	"iq3_xxs": 3.06, "iq3_xs": 3.3, "iq3_s": 3.44, "iq3_m": 3.66, "iq4_nl": 4.5, "iq4_xs": 4.25, "mxfp4": 4.25,
	"q2_k": 3.17, "q2_k_s": 3.17, "q3_k_s": 3.65, "q3_k_m": 4.0, "q3_k_l": 4.31, "q4_0": 4.64, "q4_1": 5.11,
	"q4_k_s": 4.67, "q4_k_m": 4.85, "q5_0": 5.57, "q5_1": 6.04, "q5_k_s": 5.57, "q5_k_m": 5.7, "q6_k": 6.57, "q8_0": 8.5,
}

// dynamicBase is the type an Unsloth Dynamic "_XL" quant is taken as
// (UD-Q4_K_XL: Q4_K_M's rate): those files keep the type for most
// tensors and raise a few, so the mix's rate is the floor of theirs.
var dynamicBase = map[string]string{
	"q2_k_xl": "q2_k", "q3_k_xl": "q3_k_m", "q4_k_xl": "q4_k_m", "q5_k_xl": "q5_k_m", "q6_k_xl": "q6_k", "q8_k_xl": "q8_0",
}

// GGUFTypeBits reads a llama.cpp quantisation type as a GGUF file names
// it ("Q4_K_M", "q8_0", "IQ3_XXS", Unsloth's "UD-Q6_K_XL") and gives its
// bits per weight and the precision class devctl plans it as: 4bit up to
// the 4-bit types' rates (Q4_1's 5.11 the highest), 8bit above. ok is
// false for a name that is no quantised type (F16 and BF16 are 16-bit
// weights, not a quantisation).
func GGUFTypeBits(name string) (bits float64, class capability.Precision, ok bool) {
	t := strings.ToLower(strings.TrimSpace(name))
	t = strings.TrimPrefix(t, "ud-")
	if base, dynamic := dynamicBase[t]; dynamic {
		t = base
	}
	if bits, ok = ggufTypeBits[t]; !ok {
		return 0, "", false
	}
	class = capability.Int4
	if bits > 5.2 {
		class = capability.Int8
	}
	return bits, class, true
}
