package recommend

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/oomsim"
)

// quantBlock is a config.json's quantization_config (transformers'
// QuantizationConfigMixin subclasses, serialised) or mlx-lm's
// "quantization": only the fields that size the stored weights.
type quantBlock struct {
	QuantMethod string   `json:"quant_method"`
	Bits        *float64 `json:"bits"`
	GroupSize   *float64 `json:"group_size"`
	// bitsandbytes (BitsAndBytesConfig); older files spell the flags
	// without the underscore.
	LoadIn4bit    *bool  `json:"_load_in_4bit"`
	LoadIn8bit    *bool  `json:"_load_in_8bit"`
	LoadIn4bitOld *bool  `json:"load_in_4bit"`
	LoadIn8bitOld *bool  `json:"load_in_8bit"`
	DoubleQuant   *bool  `json:"bnb_4bit_use_double_quant"`
	QuantAlgo     string `json:"quant_algo"` // NVIDIA ModelOpt: FP8, NVFP4
	// HQQ (HqqConfig.to_dict): hqq's BaseQuantizeConfig under quant_config.
	HQQ *struct {
		Weight *struct {
			NBits     *float64 `json:"nbits"`
			GroupSize *float64 `json:"group_size"`
		} `json:"weight_quant_params"`
	} `json:"quant_config"`
	// Some HQQ exports write the bits at the top.
	NBits *float64 `json:"nbits"`
	// AQLM (AqlmConfig): additive quantisation's codes.
	InGroupSize      *float64 `json:"in_group_size"`
	OutGroupSize     *float64 `json:"out_group_size"`
	NumCodebooks     *float64 `json:"num_codebooks"`
	NBitsPerCodebook *float64 `json:"nbits_per_codebook"`
	// Quanto and EETQ (QuantoConfig, EetqConfig): the weights' dtype.
	Weights      string `json:"weights"`
	ConfigGroups map[string]struct {
		Weights *struct {
			NumBits   *float64 `json:"num_bits"`
			Type      string   `json:"type"`
			GroupSize *float64 `json:"group_size"`
		} `json:"weights"`
	} `json:"config_groups"` // compressed-tensors (llm-compressor)
}

// nf4DoubleQuantBits is NF4 with its absmax per 64 weights stored in 8
// bits and an fp32 constant per 256 blocks (bnb_4bit_use_double_quant,
// QLoRA §3).
const nf4DoubleQuantBits = 4 + 8.0/64 + 32.0/(64*256)

// ParseStoredWeights reads how a config.json says its checkpoint stores
// the weights: transformers' quantization_config (bitsandbytes, GPTQ, AWQ,
// fp8, fbgemm_fp8, compressed-tensors, mxfp4, modelopt) or mlx-lm's
// quantization. It returns nil for a 16/32-bit checkpoint; a note, and
// nil, for a method devctl does not size (the plan then takes the 16-bit
// model) or for one that leaves its bits out; an error for a block whose
// numbers cannot be a quantisation.
func ParseStoredWeights(config []byte) (*oomsim.StoredWeights, string, error) {
	var top struct {
		QuantizationConfig *quantBlock `json:"quantization_config"`
		Quantization       *quantBlock `json:"quantization"`
		// A multimodal wrapper may keep its language model's block in
		// text_config (moonshotai/Kimi-K2.5's int4 experts).
		TextConfig *struct {
			QuantizationConfig *quantBlock `json:"quantization_config"`
		} `json:"text_config"`
	}
	config = bytes.TrimPrefix(config, []byte("\xef\xbb\xbf"))
	if err := json.Unmarshal(config, &top); err != nil {
		return nil, "", fmt.Errorf("quantization_config: %v", err)
	}
	q, key := top.QuantizationConfig, "quantization_config"
	if q == nil {
		q, key = top.Quantization, "quantization"
	}
	if q == nil && top.TextConfig != nil {
		q, key = top.TextConfig.QuantizationConfig, "text_config.quantization_config"
	}
	if q == nil {
		return nil, "", nil
	}
	method := strings.ToLower(strings.TrimSpace(q.QuantMethod))
	bits, group, err := q.bitsAndGroup(key)
	if err != nil {
		return nil, "", err
	}
	s := &oomsim.StoredWeights{}
	switch method {
	case "bitsandbytes":
		four := isTrue(q.LoadIn4bit) || isTrue(q.LoadIn4bitOld)
		eight := isTrue(q.LoadIn8bit) || isTrue(q.LoadIn8bitOld)
		switch {
		case four:
			s.Precision, s.Format, s.From = capability.Int4, oomsim.QuantBnB, key+": bitsandbytes 4-bit"
			if isTrue(q.DoubleQuant) {
				s.Bits = nf4DoubleQuantBits
				s.From += " with double quantisation"
			}
		case eight:
			s.Precision, s.Format, s.From = capability.Int8, oomsim.QuantBnB, key+": bitsandbytes 8-bit"
		default:
			return nil, key + ": bitsandbytes with neither load_in_4bit nor load_in_8bit set: planned as the 16-bit model", nil
		}
	case "gptq", "awq":
		if bits == 0 {
			return nil, fmt.Sprintf("%s: %s without bits: planned as the 16-bit model (give --precision 4bit or 8bit if the weights are quantised)", key, method), nil
		}
		integerGroup(s, bits, group, oomsim.QuantGPTQ)
		s.From = fmt.Sprintf("%s: %s %g-bit%s", key, strings.ToUpper(method), bits, groupText(group))
	case "fp8", "fbgemm_fp8":
		s.Precision, s.Format, s.From = capability.Int8, oomsim.QuantFP8, key+": fp8 weights"
	case "mxfp4":
		// gpt-oss: the experts in MXFP4, 4 bits plus an 8-bit shared
		// exponent per 32; attention, router and embeddings stay bf16.
		s.Precision, s.Format, s.Bits, s.From = capability.Int4, oomsim.QuantGPTQ, 4+8.0/32, key+": MXFP4 experts (4.25 bits a weight)"
	case "modelopt":
		switch strings.ToUpper(q.QuantAlgo) {
		case "FP8":
			s.Precision, s.Format, s.From = capability.Int8, oomsim.QuantFP8, key+": ModelOpt FP8"
		case "NVFP4":
			s.Precision, s.Format, s.Bits, s.From = capability.Int4, oomsim.QuantGPTQ, 4+8.0/16, key+": ModelOpt NVFP4 (an fp8 scale per 16)"
		default:
			return nil, fmt.Sprintf("%s: ModelOpt %q is not a format devctl sizes: planned as the 16-bit model", key, q.QuantAlgo), nil
		}
	case "auto-round", "intel/auto-round", "autoround":
		// AutoRound exports GPTQ's packing ("auto_round:gptq"), 4 bits
		// at group 128 by default (transformers' AutoRoundConfig).
		bits, group = cmp.Or(bits, 4), cmp.Or(group, 128)
		integerGroup(s, bits, group, oomsim.QuantGPTQ)
		s.From = fmt.Sprintf("%s: AutoRound %g-bit%s", key, bits, groupText(group))
	case "hqq":
		return hqqStorage(q, key)
	case "aqlm":
		return aqlmStorage(q, key)
	case "quanto", "eetq":
		return quantoStorage(q, method, key)
	case "bitnet":
		// BitNet b1.58: ternary weights packed four to a byte, and a
		// scale per tensor.
		s.Precision, s.Format, s.Bits, s.From = capability.Int4, oomsim.QuantGPTQ, 2, key+": BitNet ternary weights packed in 2 bits"
	case "compressed-tensors":
		return compressedTensors(q, key)
	case "":
		// mlx-lm writes {"group_size": 64, "bits": 4} and no method.
		if bits == 0 {
			return nil, key + ": neither quant_method nor bits: planned as the 16-bit model", nil
		}
		s.Format = oomsim.QuantMLX
		s.Precision = capability.Int4
		if bits > 4 {
			s.Precision = capability.Int8
		}
		if g := group; g > 0 && !((bits == 4 || bits == 8) && g == 64) {
			s.Bits = bits + 32/g // an fp16 scale and bias per group
		} else if g <= 0 && bits != 4 && bits != 8 {
			s.Bits = bits
		}
		s.From = fmt.Sprintf("%s: mlx %g-bit%s", key, bits, groupText(group))
	default:
		return nil, fmt.Sprintf("%s: quant_method %q is not one devctl sizes: planned as the 16-bit model (give --precision and --weight-bits for its storage)", key, q.QuantMethod), nil
	}
	return s, "", nil
}

// hqqStorage sizes HQQ (mobiusml/hqq, transformers' HqqConfig): nbits
// packed with an fp16 scale and zero per group (4 bits at group 64 by
// default).
func hqqStorage(q *quantBlock, key string) (*oomsim.StoredWeights, string, error) {
	w, where := quantBlock{Bits: cmp.Or(q.NBits, q.Bits), GroupSize: q.GroupSize}, key
	if q.HQQ != nil && q.HQQ.Weight != nil {
		w, where = quantBlock{Bits: q.HQQ.Weight.NBits, GroupSize: q.HQQ.Weight.GroupSize}, key+".quant_config.weight_quant_params"
	}
	bits, group, err := w.bitsAndGroup(where)
	if err != nil {
		return nil, "", err
	}
	bits, group = cmp.Or(bits, 4), cmp.Or(group, 64)
	s := &oomsim.StoredWeights{Format: oomsim.QuantGPTQ, Precision: capability.Int4, Bits: bits}
	if group > 0 {
		s.Bits = bits + 32/group
	}
	if bits > 4 {
		s.Precision = capability.Int8
	}
	s.From = fmt.Sprintf("%s: HQQ %g-bit%s", key, bits, groupText(group))
	return s, "", nil
}

// aqlmStorage sizes AQLM (Egiazarian et al. 2024): each group of
// in_group_size × out_group_size weights is num_codebooks codes of
// nbits_per_codebook bits (1×16 over 8 weights: 2 bits a weight). The
// codebooks themselves (2^nbits vectors per matrix, about 1 MiB at 1×16)
// are left out and said.
func aqlmStorage(q *quantBlock, key string) (*oomsim.StoredWeights, string, error) {
	get := func(v *float64, def float64) float64 {
		if v == nil {
			return def
		}
		return *v
	}
	in, out := get(q.InGroupSize, 8), get(q.OutGroupSize, 1)
	books, nbits := get(q.NumCodebooks, 1), get(q.NBitsPerCodebook, 16)
	for _, v := range []float64{in, out, books, nbits} {
		if math.IsNaN(v) || v < 1 || v > 1<<16 || v != math.Trunc(v) {
			return nil, "", fmt.Errorf("%s: AQLM group sizes, codebooks and code bits must be whole numbers from 1 to 65536", key)
		}
	}
	bits := books * nbits / (in * out)
	if bits > 8 {
		return nil, "", fmt.Errorf("%s: AQLM at %g bits a weight (%g codebooks of %g bits over %g×%g weights) is not a quantisation", key, bits, books, nbits, in, out)
	}
	s := &oomsim.StoredWeights{Format: oomsim.QuantGPTQ, Precision: capability.Int4, Bits: bits}
	if bits > 4.5 {
		s.Precision = capability.Int8
	}
	s.From = fmt.Sprintf("%s: AQLM %gx%g over %gx%g weights (%.3g bits a weight; its codebooks not counted)", key, books, nbits, in, out, bits)
	return s, "", nil
}

// quantoStorage sizes optimum-quanto's and EETQ's weights: int8 with a
// scale per channel, int4 and int2 with a bf16 scale and shift per group
// of 128 (quanto's default), float8.
func quantoStorage(q *quantBlock, method, key string) (*oomsim.StoredWeights, string, error) {
	w := strings.ToLower(strings.TrimSpace(q.Weights))
	if w == "" {
		w = "int8" // both configs' default
	}
	s := &oomsim.StoredWeights{From: fmt.Sprintf("%s: %s %s weights", key, method, w)}
	switch w {
	case "int8":
		s.Precision, s.Format, s.Bits = capability.Int8, oomsim.QuantGPTQ, 8
	case "float8":
		s.Precision, s.Format = capability.Int8, oomsim.QuantFP8
	case "int4", "int2":
		bits := map[string]float64{"int4": 4, "int2": 2}[w]
		s.Precision, s.Format, s.Bits = capability.Int4, oomsim.QuantGPTQ, bits+32.0/128
	default:
		return nil, fmt.Sprintf("%s: %s weights %q are not a dtype devctl sizes: planned as the 16-bit model", key, method, q.Weights), nil
	}
	return s, "", nil
}

// bitsAndGroup checks the block's bits and group_size: bits 1-8, a
// group of -1 (per channel) or 1 to 2^20 weights.
func (q *quantBlock) bitsAndGroup(key string) (bits, group float64, err error) {
	if q.Bits != nil {
		bits = *q.Bits
		if math.IsNaN(bits) || bits < 1 || bits > 8 || bits != math.Trunc(bits) {
			return 0, 0, fmt.Errorf("%s: bits %g is not a whole number from 1 to 8", key, bits)
		}
	}
	if q.GroupSize != nil {
		group = *q.GroupSize
		if math.IsNaN(group) || group != math.Trunc(group) || (group != -1 && (group < 1 || group > 1<<20)) {
			return 0, 0, fmt.Errorf("%s: group_size %g is neither -1 (per channel) nor a group of 1 to 1048576 weights", key, group)
		}
	}
	return bits, group, nil
}

// integerGroup sets a group-wise integer format: the bits plus a 16-bit
// scale and a bits-wide zero per group (GPTQ and AWQ pack both), 4 and 8
// bits at group 128 being the format's default.
func integerGroup(s *oomsim.StoredWeights, bits, group float64, f oomsim.QuantFormat) {
	s.Format = f
	s.Precision = capability.Int4
	if bits > 4 {
		s.Precision = capability.Int8
	}
	switch {
	case (bits == 4 || bits == 8) && (group == 128 || group == 0):
	case group > 0:
		s.Bits = bits + (16+bits)/group
	default:
		s.Bits = bits // per channel: one scale a row
	}
}

func groupText(group float64) string {
	switch {
	case group > 0:
		return fmt.Sprintf(", group %g", group)
	case group == -1:
		return ", per channel"
	}
	return ""
}

// compressedTensors reads llm-compressor's config_groups: the widest
// weights of any group (a model quantised in one scheme has one group).
func compressedTensors(q *quantBlock, key string) (*oomsim.StoredWeights, string, error) {
	names := make([]string, 0, len(q.ConfigGroups))
	for n := range q.ConfigGroups {
		names = append(names, n)
	}
	sort.Strings(names)
	var bits, group float64
	var kind string
	for _, n := range names {
		w := q.ConfigGroups[n].Weights
		if w == nil || w.NumBits == nil {
			continue
		}
		b := *w.NumBits
		if math.IsNaN(b) || b < 1 || b > 16 || b != math.Trunc(b) {
			return nil, "", fmt.Errorf("%s: config_groups.%s.weights.num_bits %g is not a whole number from 1 to 16", key, n, b)
		}
		if b > bits {
			bits, kind, group = b, strings.ToLower(w.Type), 0
			if w.GroupSize != nil && *w.GroupSize > 0 && *w.GroupSize <= 1<<20 {
				group = *w.GroupSize
			}
		}
	}
	s := &oomsim.StoredWeights{}
	switch {
	case bits == 0:
		return nil, key + ": compressed-tensors without weight bits: planned as the 16-bit model", nil
	case bits >= 16:
		return nil, "", nil // activations-only quantisation: the weights are 16-bit
	case kind == "float" && bits == 8:
		s.Precision, s.Format = capability.Int8, oomsim.QuantFP8
	case kind == "float" && bits == 4:
		s.Precision, s.Format, s.Bits = capability.Int4, oomsim.QuantGPTQ, 4+8.0/max(group, 16) // NVFP4: an fp8 scale per 16
	case bits > 8:
		return nil, fmt.Sprintf("%s: compressed-tensors %g-bit weights: planned as the 16-bit model", key, bits), nil
	default:
		integerGroup(s, bits, group, oomsim.QuantGPTQ)
		if group == 0 {
			s.Bits = bits // channel-wise int (W8A8, W4A16 channel)
		}
	}
	s.From = fmt.Sprintf("%s: compressed-tensors %s %g-bit%s", key, kind, bits, groupText(group))
	return s, "", nil
}

func isTrue(b *bool) bool { return b != nil && *b }
