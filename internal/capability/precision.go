package capability

import (
	"fmt"
	"strings"
)

// Precision is a numeric format a device computes in or stores weights in,
// spelled as config (device.precision), flags and the report spell it.
type Precision string

// The precisions devctl knows, from widest to narrowest.
const (
	FP32 Precision = "fp32"
	BF16 Precision = "bf16"
	FP16 Precision = "fp16"
	FP8  Precision = "fp8"
	Int8 Precision = "8bit"
	Int4 Precision = "4bit"
)

// Auto is not a format: as a setting (device.precision, --precision) it
// lets devctl choose the precision for the device and the model.
const Auto Precision = "auto"

// Precisions are the precisions a user may ask for (--precision,
// device.precision, a --precision-env variable), in the order help texts
// list them. fp8 is a capability the report shows, not a setting.
var Precisions = []Precision{FP32, FP16, BF16, Int8, Int4}

// spellings maps every accepted spelling to its precision: devctl's own
// names and the dtype names PyTorch and JAX users write (torch.bfloat16 ->
// "bfloat16", "half").
var spellings = map[string]Precision{
	"fp32": FP32, "float32": FP32, "float": FP32, "f32": FP32,
	"fp16": FP16, "float16": FP16, "half": FP16, "f16": FP16,
	"bf16": BF16, "bfloat16": BF16,
	"fp8": FP8, "float8": FP8,
	"8bit": Int8, "int8": Int8,
	"4bit": Int4, "int4": Int4, "nf4": Int4, "fp4": Int4,
	// Lightning's precision names: the dtype, and whether the weights stay
	// 16-bit (-true) or keep an fp32 master copy (-mixed); TrainingRegime
	// reads the second half.
	"bf16-true": BF16, "bf16-mixed": BF16, "16-true": FP16, "16-mixed": FP16, "32-true": FP32,
}

// TrainingRegime is the regime a Lightning precision name states: "pure"
// for bf16-true and 16-true (16-bit weights and optimizer state), "amp" for
// bf16-mixed and 16-mixed (fp32 weights under autocast), "" for the other
// spellings.
func TrainingRegime(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "bf16-true", "16-true":
		return "pure"
	case "bf16-mixed", "16-mixed":
		return "amp"
	}
	return ""
}

// torchNames are the dtype spellings lowerings keep when the user wrote one.
var torchNames = map[Precision]string{FP32: "float32", FP16: "float16", BF16: "bfloat16", Int8: "int8", Int4: "int4"}

// ParsePrecision reads a precision in any accepted spelling, ignoring case
// and surrounding space.
func ParsePrecision(s string) (Precision, error) {
	if p, ok := spellings[strings.ToLower(strings.TrimSpace(s))]; ok {
		return p, nil
	}
	return "", fmt.Errorf("unknown precision %q: want one of %s (or float32, bfloat16, float16, int8, int4)", s, strings.Join(Names(Precisions), ", "))
}

// IsTorchSpelling reports whether s is spelled as a torch dtype
// ("bfloat16") rather than devctl's name ("bf16"), so a changed value can
// be written back the way the user wrote it.
func IsTorchSpelling(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, n := range torchNames {
		if n == s {
			return true
		}
	}
	return false
}

// TorchName is the torch dtype spelling of p ("bfloat16").
func (p Precision) TorchName() string { return torchNames[p] }

// Level orders precisions by width: 0 for fp32, 1 for the 16-bit types, 2
// for 8-bit formats, 3 for 4-bit. A lower precision has a higher level.
func (p Precision) Level() int {
	switch p {
	case FP32:
		return 0
	case BF16, FP16:
		return 1
	case FP8, Int8:
		return 2
	case Int4:
		return 3
	}
	return -1
}

// Lower is the next narrower precision a fallback tries: fp32 to the
// device's 16-bit type (bf16 where it runs natively, else fp16), 16-bit to
// 8-bit weights, 8-bit to 4-bit. ok is false at 4-bit.
func (p Precision) Lower(bf16 bool) (next Precision, ok bool) {
	switch p.Level() {
	case 0:
		if bf16 {
			return BF16, true
		}
		return FP16, true
	case 1:
		return Int8, true
	case 2:
		return Int4, true
	}
	return "", false
}

// Bits is the storage width of one value: 32, 16, 8 or 4.
func (p Precision) Bits() int {
	switch p.Level() {
	case 0:
		return 32
	case 1:
		return 16
	case 2:
		return 8
	case 3:
		return 4
	}
	return 0
}

// Names spells a list of precisions, for messages.
func Names(ps []Precision) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}
