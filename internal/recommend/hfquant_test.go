package recommend

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/hfhub"
	"github.com/devctl/devctl/internal/oomsim"
)

// The quantisation blocks below are as the publishers write them:
//   - AWQ: Qwen/Qwen2.5-7B-Instruct-AWQ's config.json (AutoAWQ's export);
//   - GPTQ: TheBloke/Llama-2-7B-Chat-GPTQ's (AutoGPTQ via optimum, the
//     block Intel Neural Compressor copies, neural_compressor/transformers
//     "Refer to https://huggingface.co/TheBloke/Llama-2-7B-Chat-GPTQ");
//   - bitsandbytes: an unsloth *-bnb-4bit upload (BitsAndBytesConfig.to_dict);
//   - fp8: deepseek-ai/DeepSeek-V3's;
//   - compressed-tensors: llm-compressor's W4A16 and FP8 schemes;
//   - mxfp4: openai/gpt-oss-20b's (testdata/models/gpt-oss-20b.config.json);
//   - mlx: mlx-lm's convert (mlx_lm/utils.py writes "quantization").
func TestParseStoredWeights(t *testing.T) {
	cases := []struct {
		name, block string
		prec        capability.Precision
		format      oomsim.QuantFormat
		bits        float64
	}{
		{"awq", `"quantization_config": {"bits": 4, "group_size": 128, "modules_to_not_convert": null, "quant_method": "awq", "version": "gemm", "zero_point": true}`,
			capability.Int4, oomsim.QuantGPTQ, 0},
		{"gptq", `"quantization_config": {"bits": 4, "group_size": 128, "damp_percent": 0.01, "desc_act": false, "sym": true, "true_sequential": true, "model_name_or_path": null, "model_file_base_name": "model", "quant_method": "gptq"}`,
			capability.Int4, oomsim.QuantGPTQ, 0},
		{"gptq 8-bit", `"quantization_config": {"bits": 8, "group_size": 128, "desc_act": false, "quant_method": "gptq"}`,
			capability.Int8, oomsim.QuantGPTQ, 0},
		{"gptq 3-bit group 64", `"quantization_config": {"bits": 3, "group_size": 64, "quant_method": "gptq"}`,
			capability.Int4, oomsim.QuantGPTQ, 3 + 19.0/64},
		{"gptq per channel", `"quantization_config": {"bits": 4, "group_size": -1, "quant_method": "gptq"}`,
			capability.Int4, oomsim.QuantGPTQ, 4},
		{"bnb nf4 double quant", `"quantization_config": {"_load_in_4bit": true, "_load_in_8bit": false, "bnb_4bit_compute_dtype": "bfloat16", "bnb_4bit_quant_storage": "uint8", "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true, "llm_int8_enable_fp32_cpu_offload": false, "llm_int8_has_fp16_weight": false, "llm_int8_skip_modules": null, "llm_int8_threshold": 6.0, "load_in_4bit": true, "load_in_8bit": false, "quant_method": "bitsandbytes"}`,
			capability.Int4, oomsim.QuantBnB, nf4DoubleQuantBits},
		{"bnb 8-bit, old spelling", `"quantization_config": {"load_in_8bit": true, "quant_method": "bitsandbytes"}`,
			capability.Int8, oomsim.QuantBnB, 0},
		{"fp8 blocks", `"quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}`,
			capability.Int8, oomsim.QuantFP8, 0},
		{"compressed-tensors w4a16", `"quantization_config": {"config_groups": {"group_0": {"input_activations": null, "output_activations": null, "targets": ["Linear"], "weights": {"actorder": null, "block_structure": null, "dynamic": false, "group_size": 128, "num_bits": 4, "observer": "minmax", "strategy": "group", "symmetric": true, "type": "int"}}}, "format": "pack-quantized", "ignore": ["lm_head"], "quant_method": "compressed-tensors", "quantization_status": "compressed"}`,
			capability.Int4, oomsim.QuantGPTQ, 0},
		{"compressed-tensors fp8", `"quantization_config": {"config_groups": {"group_0": {"input_activations": {"dynamic": true, "num_bits": 8, "strategy": "token", "type": "float"}, "targets": ["Linear"], "weights": {"dynamic": false, "num_bits": 8, "strategy": "tensor", "symmetric": true, "type": "float"}}}, "format": "float-quantized", "ignore": ["lm_head"], "quant_method": "compressed-tensors"}`,
			capability.Int8, oomsim.QuantFP8, 0},
		{"compressed-tensors nvfp4", `"quantization_config": {"config_groups": {"group_0": {"weights": {"group_size": 16, "num_bits": 4, "strategy": "tensor_group", "symmetric": true, "type": "float"}}}, "format": "nvfp4-pack-quantized", "quant_method": "compressed-tensors"}`,
			capability.Int4, oomsim.QuantGPTQ, 4.5},
		{"mxfp4", `"quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"}`,
			capability.Int4, oomsim.QuantGPTQ, 4.25},
		{"mlx 4-bit", `"quantization": {"group_size": 64, "bits": 4}`, capability.Int4, oomsim.QuantMLX, 0},
		{"mlx 6-bit", `"quantization": {"group_size": 64, "bits": 6}`, capability.Int8, oomsim.QuantMLX, 6.5},
		// AutoRound as Intel's exports write it (a SpinQuant design note
		// quotes the block); AQLM as BlackSamorez/Llama-2-7b-AQLM-2Bit-1x16-hf
		// (quoted in vLLM's aqlm.py); HQQ as HqqConfig.to_dict nests hqq's
		// BaseQuantizeConfig, and as some exports flatten it.
		{"auto-round", `"quantization_config": {"quant_method": "intel/auto-round", "bits": 4, "group_size": 128}`,
			capability.Int4, oomsim.QuantGPTQ, 0},
		{"auto-round 2-bit group 64", `"quantization_config": {"quant_method": "auto-round", "bits": 2, "group_size": 64, "sym": true}`,
			capability.Int4, oomsim.QuantGPTQ, 2 + 18.0/64},
		{"aqlm 1x16", `"quantization_config": {"in_group_size": 8, "nbits_per_codebook": 16, "num_codebooks": 1, "out_group_size": 1, "quant_method": "aqlm", "linear_weights_not_to_quantize": ["model.embed_tokens.weight", "lm_head.weight"]}`,
			capability.Int4, oomsim.QuantGPTQ, 2},
		{"aqlm 2x8", `"quantization_config": {"in_group_size": 8, "nbits_per_codebook": 8, "num_codebooks": 2, "out_group_size": 1, "quant_method": "aqlm"}`,
			capability.Int4, oomsim.QuantGPTQ, 2},
		{"hqq nested", `"quantization_config": {"quant_config": {"offload_meta": false, "scale_quant_params": null, "weight_quant_params": {"axis": 1, "channel_wise": true, "group_size": 64, "nbits": 4, "optimize": true, "round_zero": true, "view_as_float": false}, "zero_quant_params": null}, "quant_method": "hqq", "skip_modules": ["lm_head"]}`,
			capability.Int4, oomsim.QuantGPTQ, 4.5},
		{"hqq flat 2-bit", `"quantization_config": {"quant_method": "hqq", "nbits": 2, "group_size": 16}`,
			capability.Int4, oomsim.QuantGPTQ, 4},
		{"quanto int4", `"quantization_config": {"quant_method": "quanto", "weights": "int4", "activations": null}`,
			capability.Int4, oomsim.QuantGPTQ, 4.25},
		{"quanto float8", `"quantization_config": {"quant_method": "quanto", "weights": "float8"}`,
			capability.Int8, oomsim.QuantFP8, 0},
		{"eetq", `"quantization_config": {"quant_method": "eetq", "weights": "int8"}`,
			capability.Int8, oomsim.QuantGPTQ, 8},
		{"bitnet", `"quantization_config": {"quant_method": "bitnet", "modules_to_not_convert": ["lm_head"]}`,
			capability.Int4, oomsim.QuantGPTQ, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, note, err := ParseStoredWeights([]byte(`{"model_type": "llama", ` + c.block + `}`))
			if err != nil || note != "" || st == nil {
				t.Fatalf("got %+v, note %q, err %v", st, note, err)
			}
			if st.Precision != c.prec || st.Format != c.format || math.Abs(st.Bits-c.bits) > 1e-9 || st.From == "" {
				t.Errorf("got %+v, want %s %s %g bits", st, c.prec, c.format, c.bits)
			}
		})
	}
}

// A 16-bit config has no stored quantisation; a method devctl does not
// size is said and planned at 16 bits; numbers no quantisation has are
// refused with a line that names the field.
func TestParseStoredWeightsRefusals(t *testing.T) {
	st, note, err := ParseStoredWeights([]byte(`{"model_type": "llama", "torch_dtype": "bfloat16"}`))
	if st != nil || note != "" || err != nil {
		t.Errorf("16-bit config: %+v %q %v", st, note, err)
	}
	st, note, err = ParseStoredWeights([]byte(`{"quantization_config": {"quant_method": "vptq", "config_for_layers": {}}}`))
	if st != nil || !strings.Contains(note, `"vptq"`) || err != nil {
		t.Errorf("vptq: %+v %q %v", st, note, err)
	}
	st, note, err = ParseStoredWeights([]byte(`{"quantization_config": {"quant_method": "quanto", "weights": "int3"}}`))
	if st != nil || !strings.Contains(note, `"int3"`) || err != nil {
		t.Errorf("quanto int3: %+v %q %v", st, note, err)
	}
	// Checkpoints released quantised, as their own config.json
	// (testdata/models) and devctl's built-in copy say: gpt-oss in MXFP4,
	// DeepSeek-V3 in block FP8. The gpt-oss-120b and DeepSeek-V3 copies
	// once lacked their quantization_config (both came from maxtext's
	// dicts) and planned 16-bit weights: 217 GiB for gpt-oss-120b.
	for _, c := range []struct {
		id, file string
		want     capability.Precision
		bits     float64 // 0: the precision's own width
	}{
		{"openai/gpt-oss-20b", "gpt-oss-20b", capability.Int4, 4.25},
		{"openai/gpt-oss-120b", "gpt-oss-120b", capability.Int4, 4.25},
		{"deepseek-ai/DeepSeek-V3", "deepseek-v3", capability.Int8, 0},
		{"deepseek-ai/DeepSeek-R1", "deepseek-r1", capability.Int8, 0},
	} {
		data, err := os.ReadFile("../../testdata/models/" + c.file + ".config.json")
		if err != nil {
			t.Fatal(err)
		}
		if st, _, err := ParseStoredWeights(data); err != nil || st == nil || st.Precision != c.want || st.Bits != c.bits {
			t.Errorf("%s: %+v %v, want %s (%g bits)", c.id, st, err, c.want, c.bits)
		}
		_, _, builtin, ok := builtinConfig(c.id)
		if !ok {
			t.Fatalf("%s has no built-in config.json", c.id)
		}
		if st, _, err := ParseStoredWeights(builtin); err != nil || st == nil || st.Precision != c.want || st.Bits != c.bits || !builtinOwn(c.id) {
			t.Errorf("%s built in: %+v %v (own copy %v), want %s (%g bits)", c.id, st, err, builtinOwn(c.id), c.want, c.bits)
		}
	}
	// A copy of it on a side branch said gptq and gave no bits: said, and
	// planned at 16 bits.
	st, note, err = ParseStoredWeights([]byte(`{"quantization_config": {"modules_to_not_convert": ["lm_head"], "quant_method": "gptq"}}`))
	if st != nil || !strings.Contains(note, "without bits") || err != nil {
		t.Errorf("gptq without bits: %+v %q %v", st, note, err)
	}
	for block, field := range map[string]string{
		`{"quant_method": "gptq", "bits": 17}`:                                                          "bits 17",
		`{"quant_method": "awq", "bits": 4, "group_size": 0}`:                                           "group_size 0",
		`{"quant_method": "gptq", "bits": 4.5}`:                                                         "bits 4.5",
		`{"quant_method": "gptq", "bits": "four"}`:                                                      "quantization_config",
		`{"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": -3}}}}`: "num_bits -3",
		`{"quant_method": "hqq", "quant_config": {"weight_quant_params": {"nbits": 9}}}`:                "weight_quant_params: bits 9",
		`{"quant_method": "aqlm", "num_codebooks": 0}`:                                                  "AQLM",
		`{"quant_method": "aqlm", "num_codebooks": 8, "nbits_per_codebook": 16}`:                        "16 bits a weight",
	} {
		if _, _, err := ParseStoredWeights([]byte(`{"quantization_config": ` + block + `}`)); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want an error naming %q", block, err, field)
		}
	}
}

// A quantised checkpoint is planned as it is stored unless --precision
// asks otherwise; full training plans the 16-bit model and says why.
func TestStoredWeightsPlanAsLoaded(t *testing.T) {
	base, err := configs.Hub.ReadFile("hub/qwen2.5-7b.config.json")
	if err != nil {
		t.Fatal(err)
	}
	awq := strings.Replace(string(base), "{", `{"quantization_config": {"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemm", "zero_point": true}, `, 1)
	m, _, err := ModelFromFiles("Qwen/Qwen2.5-7B-Instruct-AWQ", []byte(awq), 0)
	if err != nil || m.Stored == nil {
		t.Fatalf("%+v %v", m.Stored, err)
	}
	in := Input{Model: m, Target: catalogueTarget(t, "rtx-4090"), RunSettings: RunSettings{Mode: oomsim.Inference, BatchSize: 1, SeqLen: 4096, Devices: 1}}
	r, err := Recommend(in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Precision != capability.Int4 || r.Plan.Quant != oomsim.QuantGPTQ || r.Model.Stored == nil {
		t.Errorf("AWQ checkpoint planned at %s %s, want 4bit gptq", r.Precision, r.Plan.Quant)
	}
	in.Precision, in.PrecisionSource = capability.BF16, "flag --precision"
	if r, err := Recommend(in); err != nil || r.Precision != capability.BF16 || !hasReason(r, "planned at bf16 as asked") {
		t.Errorf("--precision bf16 on an AWQ checkpoint: %v %v", r.Precision, err)
	}
	// On a Mac the AWQ kernels do not run: the 16-bit model, said; an mlx
	// conversion is planned under mlx.
	mac := in
	mac.Target, mac.Precision, mac.PrecisionSource = catalogueTarget(t, "apple-m4-16gb"), "", ""
	if r, err := Recommend(mac); err != nil || r.Precision == capability.Int4 || !hasReason(r, "does not run") {
		t.Errorf("AWQ checkpoint on a Mac: %v %v", r.Precision, err)
	}
	mlx := mac
	mlx.Model.Stored = &oomsim.StoredWeights{Precision: capability.Int4, Format: oomsim.QuantMLX, From: "quantization: mlx 4-bit, group 64"}
	if r, err := Recommend(mlx); err != nil || r.Precision != capability.Int4 || r.Plan.Stack != oomsim.StackMLX {
		t.Errorf("mlx checkpoint on a Mac: %v %v %v", r.Precision, r.Plan.Stack, err)
	}
	in.Precision, in.Mode = "", oomsim.Training
	if r, err := Recommend(in); err != nil || r.Precision == capability.Int4 || !hasReason(r, "16-bit model") {
		t.Errorf("full training of an AWQ checkpoint: %v %v", r.Precision, err)
	}
}

func hasReason(r *Result, text string) bool {
	for _, w := range r.Reasons {
		if strings.Contains(w.Why, text) {
			return true
		}
	}
	return false
}

// Re-uploads resolve to the model they package when the Hub gives no
// config: offline, gated, or a GGUF repository without config.json.
func TestReuploadsResolveToTheirModel(t *testing.T) {
	cases := []struct {
		id, base string
		prec     capability.Precision
		format   oomsim.QuantFormat
		gguf     bool
	}{
		{"unsloth/phi-4-bnb-4bit", "microsoft/phi-4", capability.Int4, oomsim.QuantBnB, false},
		{"unsloth/Qwen3-8B-unsloth-bnb-4bit", "Qwen/Qwen3-8B", capability.Int4, oomsim.QuantBnB, false},
		{"mlx-community/Qwen3-8B-4bit", "Qwen/Qwen3-8B", capability.Int4, oomsim.QuantMLX, false},
		{"lmstudio-community/Qwen3-8B-MLX-8bit", "Qwen/Qwen3-8B", capability.Int8, oomsim.QuantMLX, false},
		{"Qwen/Qwen2.5-7B-Instruct-AWQ", "Qwen/Qwen2.5-7B-Instruct", capability.Int4, oomsim.QuantGPTQ, false},
		{"Qwen/Qwen-7B-Chat-Int4", "Qwen/Qwen-7B-Chat", capability.Int4, oomsim.QuantGPTQ, false},
		{"RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8", "meta-llama/Meta-Llama-3.1-8B-Instruct", capability.Int8, oomsim.QuantFP8, false},
		{"bartowski/Qwen3-8B-GGUF", "Qwen/Qwen3-8B", "", "", true},
		{"unsloth/llama-3-8b-Instruct-bnb-4bit", "meta-llama/Meta-Llama-3-8B-Instruct", capability.Int4, oomsim.QuantBnB, false},
		{"TheBloke/Llama-2-7B-Chat-GPTQ", "meta-llama/Llama-2-7b-chat-hf", capability.Int4, oomsim.QuantGPTQ, false},
		{"unsloth/Llama-3.2-3B-Instruct", "meta-llama/Llama-3.2-3B-Instruct", "", "", false},
		// Red Hat's llm-compressor names, and Meta's dropped prefix kept.
		{"RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16", "meta-llama/Meta-Llama-3.1-8B-Instruct", capability.Int4, oomsim.QuantGPTQ, false},
		{"RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w8a8", "mistralai/Mistral-Small-3.1-24B-Instruct-2503", capability.Int8, oomsim.QuantGPTQ, false},
		{"meta-llama/Meta-Llama-3.1-405B-Instruct-FP8", "meta-llama/Llama-3.1-405B-Instruct", capability.Int8, oomsim.QuantFP8, false},
		{"hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", "meta-llama/Llama-3.1-70B-Instruct", capability.Int4, oomsim.QuantGPTQ, false},
		// A bare bit count, AutoRound, and W8A16.
		{"01-ai/Yi-34B-Chat-4bits", "01-ai/Yi-34B-Chat", capability.Int4, oomsim.QuantGPTQ, false},
		{"internlm/internlm2_5-7b-chat-4bit", "internlm/internlm2_5-7b-chat", capability.Int4, oomsim.QuantGPTQ, false},
		{"Lorbus/Qwen3.6-27B-int4-AutoRound", "Qwen/Qwen3.6-27B", capability.Int4, oomsim.QuantGPTQ, false},
		{"Vezora/Qwen2.5-Coder-32B-Instruct-fp8-W8A16", "Qwen/Qwen2.5-Coder-32B-Instruct", capability.Int8, oomsim.QuantGPTQ, false},
		// mlx's bits with a group size; gpt-oss keeps its own MXFP4.
		{"mlx-community/Qwen3-4B-Instruct-2507-5bit-g32", "Qwen/Qwen3-4B-Instruct-2507", capability.Int8, oomsim.QuantMLX, false},
		{"mlx-community/gpt-oss-20b-MXFP4-Q8", "openai/gpt-oss-20b", "", "", false},
	}
	for _, c := range cases {
		base, st, gguf, _, ok := reuploadOf(c.id)
		if !ok || base != c.base || gguf != c.gguf {
			t.Errorf("%s: %q gguf=%v ok=%v, want %s", c.id, base, gguf, ok, c.base)
			continue
		}
		switch {
		case c.prec == "" && st != nil:
			t.Errorf("%s: stored %+v, want none", c.id, st)
		case c.prec != "" && (st == nil || st.Precision != c.prec || st.Format != c.format):
			t.Errorf("%s: stored %+v, want %s %s", c.id, st, c.prec, c.format)
		}
	}
	if _, st, _, _, _ := reuploadOf("mlx-community/Qwen3-4B-Instruct-2507-4bit-g32"); st == nil || st.Bits != 5 {
		t.Errorf("mlx 4-bit, group 32: %+v, want 5 bits a weight", st)
	}
	for _, id := range []string{"nobody/no-such-model-GGUF", "Qwen3-8B", "mlx-community/4bit",
		// A family name without a size, and a size beside the copy's.
		"someone/Qwen3-Coder-custom", "someone/Qwen3-8B-upscaled-12B",
		// A name inside a word is not the name.
		"someone/MyQwen3-8B", "someone/TinyLlama-3.1-8Bx"} {
		if base, _, _, _, ok := reuploadOf(id); ok {
			t.Errorf("%s resolved to %s", id, base)
		}
	}
}

// A fine-tune whose name contains a copy's sized name, whole, is planned
// with that copy's shapes (the longest such name), and a quantisation
// named anywhere beside it says how it is stored.
func TestFineTunesResolveToTheBaseTheirNameContains(t *testing.T) {
	cases := []struct {
		id, base string
		prec     capability.Precision
	}{
		{"INSAIT-Institute/BgGPT-Gemma-3-12B-IT", "google/gemma-3-12b-it", ""},
		{"huihui-ai/Huihui-Qwen3.5-27B-abliterated", "Qwen/Qwen3.5-27B", ""},
		{"Jackrong/Qwen3.5-9B-Claude-4.6-Opus-Reasoning-Distilled", "Qwen/Qwen3.5-9B", ""},
		{"dphn/dolphin-2.9.1-yi-1.5-34b", "01-ai/Yi-1.5-34B-Chat", ""},
		{"someone/Qwen3-8B-notasuffix", "Qwen/Qwen3-8B", ""},
		// The instruct release's stem: Qwen3-VL-4B-Thinking has Qwen3-VL-4B-Instruct's shapes.
		{"Qwen/Qwen3-VL-4B-Thinking", "Qwen/Qwen3-VL-4B-Instruct", ""},
		// The quantisation is not at the end.
		{"ISTA-DASLab/gemma-3-27b-it-GPTQ-4b-128g", "google/gemma-3-27b-it", capability.Int4},
		{"RedHatAI/gemma-4-31B-it-FP8-block", "google/gemma-4-31B-it", capability.Int8},
		{"shieldstar/Qwen3.5-122B-A10B-int4-AutoRound-EC", "Qwen/Qwen3.5-122B-A10B", capability.Int4},
	}
	for _, c := range cases {
		base, st, _, kin, ok := reuploadOf(c.id)
		if !ok || base != c.base || kin != fineTune {
			t.Errorf("%s: %q kin=%v ok=%v, want a fine-tune of %s", c.id, base, kin, ok, c.base)
			continue
		}
		if got := capability.Precision(""); st != nil {
			got = st.Precision
			if got != c.prec {
				t.Errorf("%s: stored %s, want %q", c.id, got, c.prec)
			}
		} else if c.prec != "" {
			t.Errorf("%s: no storage, want %s", c.id, c.prec)
		}
	}
	if got := largestSize("Mixtral-8x7B-v0.1-E4B-135M"); got != 56 {
		t.Errorf("largestSize = %v, want 56 (8x7B)", got)
	}
}

// LoadModel falls back on the re-upload's model when offline, and when the
// Hub refuses the config or has none (a GGUF repository); the source line
// says which copy was used and why.
func TestLoadModelReuploadFallbacks(t *testing.T) {
	offline := Deps{Hub: hfhub.Options{Offline: true, HubCaches: []string{t.TempDir()}, Cache: t.TempDir()}}
	m, src, err := LoadModel(context.Background(), ModelSpec{Name: "unsloth/phi-4-bnb-4bit"}, offline)
	if err != nil || m.Stored == nil || m.Stored.Precision != capability.Int4 || !strings.Contains(src, "microsoft/phi-4") || !strings.Contains(src, "re-package") {
		t.Fatalf("offline re-upload: %+v %q %v", m.Stored, src, err)
	}
	// A fine-tune devctl has no copy of: its base's shapes, said so, and
	// the quantisation its name states.
	m, src, err = LoadModel(context.Background(), ModelSpec{Name: "ISTA-DASLab/gemma-3-27b-it-GPTQ-4b-128g"}, offline)
	if err != nil || m.Name != "ISTA-DASLab/gemma-3-27b-it-GPTQ-4b-128g" || m.Stored == nil || m.Stored.Precision != capability.Int4 ||
		!strings.Contains(src, "fine-tune of google/gemma-3-27b-it, whose name it contains") {
		t.Fatalf("offline fine-tune: %q %+v %q %v", m.Name, m.Stored, src, err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.Contains(r.URL.Path, "meta-llama/"):
			w.Header().Set("X-Error-Code", "GatedRepo")
			w.WriteHeader(http.StatusForbidden)
		default:
			w.Header().Set("X-Error-Code", "EntryNotFound")
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	online := Deps{Hub: hfhub.Options{Endpoint: srv.URL, HubCaches: []string{t.TempDir()}, Cache: t.TempDir()}}
	m, src, err = LoadModel(context.Background(), ModelSpec{Name: "meta-llama/Llama-3.1-8B"}, online)
	if err != nil || m.Arch == nil || !strings.Contains(src, "gated") {
		t.Errorf("gated id with a copy: %q %v", src, err)
	}
	m, src, err = LoadModel(context.Background(), ModelSpec{Name: "Qwen/Qwen3-8B-GGUF"}, online)
	if err != nil || m.Stored != nil || !strings.Contains(src, "Qwen/Qwen3-8B") || !strings.Contains(strings.Join(m.Notes, " "), "GGUF") {
		t.Errorf("GGUF repository: %+v %q %v", m.Stored, src, err)
	}
	if _, _, err := LoadModel(context.Background(), ModelSpec{Name: "nobody/nothing-here"}, online); !errors.Is(err, ErrInput) {
		t.Errorf("no config and no copy: %v, want an input error", err)
	}
}

func FuzzParseStoredWeights(f *testing.F) {
	f.Add([]byte(`{"quantization_config": {"bits": 4, "group_size": 128, "quant_method": "awq"}}`))
	f.Add([]byte(`{"quantization": {"group_size": 64, "bits": 4}}`))
	f.Add([]byte(`{"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float", "group_size": 16}}}}}`))
	f.Add([]byte(`{"quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true}}`))
	f.Add([]byte(`{"quantization_config": {"quant_method": "aqlm", "in_group_size": 8, "num_codebooks": 1, "nbits_per_codebook": 16}}`))
	f.Add([]byte(`{"quantization_config": {"quant_method": "hqq", "quant_config": {"weight_quant_params": {"nbits": 4, "group_size": 64}}}}`))
	f.Add([]byte(`{"quantization_config": {"quant_method": "quanto", "weights": "int2"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, _, err := ParseStoredWeights(data)
		if err != nil || st == nil {
			return
		}
		if st.Precision != capability.Int4 && st.Precision != capability.Int8 {
			t.Fatalf("precision %q", st.Precision)
		}
		if st.Bits < 0 || st.Bits > 16 || math.IsNaN(st.Bits) || st.From == "" {
			t.Fatalf("%+v", st)
		}
	})
}

// A config's _name_or_path that is where its author kept the model (a
// local directory) does not become the model's name; an ORG/NAME does.
func TestModelNameIsNotALocalPath(t *testing.T) {
	for nameOrPath, want := range map[string]string{
		"/home/someone/.cache/huggingface/hub/models--x--y/snapshots/abc": "given.json",
		"./out/checkpoint-500": "given.json",
		`C:\models\llama`:      "given.json",
		"Qwen/Qwen2.5-7B":      "Qwen/Qwen2.5-7B",
	} {
		cfg := `{"_name_or_path": "` + strings.ReplaceAll(nameOrPath, `\`, `\\`) + `", "model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1000}`
		m, _, err := fromFiles("given.json", "config.json", []byte(cfg), nil, "--model-config given.json")
		if err != nil || m.Name != want {
			t.Errorf("_name_or_path %q: name %q (%v), want %q", nameOrPath, m.Name, err, want)
		}
	}
}

// Any --model name resolves to a built-in copy or to nothing, without
// panicking: re-upload endings, fine-tune siblings and a contained name.
func FuzzReuploadOf(f *testing.F) {
	for _, seed := range []string{"unsloth/phi-4-bnb-4bit", "INSAIT-Institute/BgGPT-Gemma-3-12B-IT", "ISTA-DASLab/gemma-3-27b-it-GPTQ-4b-128g",
		"someone/Qwen3-8B-upscaled-12B", "mlx-community/Qwen3-4B-Instruct-2507-4bit-g32", "-", "/", "a/-8x7B-", "E4B", "x/0.6B.0.6B", ""} {
		f.Add(seed)
	}
	ids := map[string]bool{}
	for _, e := range builtinIndex() {
		ids[e.id] = true
	}
	f.Fuzz(func(t *testing.T, name string) {
		base, st, _, _, ok := reuploadOf(name)
		if !ok {
			return
		}
		if !ids[base] {
			t.Fatalf("%q resolved to %q, not a built-in id", name, base)
		}
		if st != nil && (st.Bits < 0 || st.Bits > 16) {
			t.Fatalf("%q: stored %+v", name, st)
		}
		_ = largestSize(name)
	})
}
