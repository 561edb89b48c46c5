package recommend

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/suggest"
)

// CatalogModel is one entry of configs/models.yaml.
type CatalogModel struct {
	Name               string `yaml:"name"`
	HFID               string `yaml:"hf_id"`
	Family             string `yaml:"family"`
	Params             int64  `yaml:"params"`
	HeadParams         int64  `yaml:"head_params"`
	BufferBytes        int64  `yaml:"buffer_bytes"`
	LargestLayerParams int64  `yaml:"largest_layer_params"`
	Layers             int    `yaml:"layers"`
	KVLayers           int    `yaml:"kv_layers"`
	Hidden             int    `yaml:"hidden"`
	Heads              int    `yaml:"heads"`
	KVHeads            int    `yaml:"kv_heads"`
	HeadDim            int    `yaml:"head_dim"`
	FFN                int    `yaml:"ffn"`
	Vocab              int    `yaml:"vocab"`
	MaxPositions       int    `yaml:"max_positions"`
	Tied               bool   `yaml:"tied"`
	// AttnDropout is the dropout on attention probabilities in training
	// (the config's attention_probs_dropout_prob / attn_pdrop /
	// dropout_rate); 0 for the LLM families.
	AttnDropout float64 `yaml:"attn_dropout"`
}

// Model converts a catalogue entry for the estimator.
func (c CatalogModel) Model() oomsim.Model {
	m := oomsim.Model{Name: c.Name, Family: c.Family, Params: c.Params, HeadParams: c.HeadParams,
		BufferBytes: c.BufferBytes, LargestLayerParams: c.LargestLayerParams}
	if c.Hidden > 0 {
		m.Arch = &oomsim.Arch{Layers: c.Layers, KVLayers: c.KVLayers, Hidden: c.Hidden, Heads: c.Heads,
			KVHeads: c.KVHeads, HeadDim: c.HeadDim, FFN: c.FFN, Vocab: c.Vocab, MaxPositions: c.MaxPositions,
			Gated: gatedFamilies[c.Family], AttnDropout: c.AttnDropout}
	}
	return m
}

// gatedFamilies are the catalogue families whose MLP has three matrices
// (SwiGLU/GeGLU): the Llama lineage and its descendants.
var gatedFamilies = map[string]bool{"llama": true, "mistral": true, "qwen2": true, "qwen3": true, "gemma": true, "gemma2": true, "phi3": true}

// CatalogDevice is one entry of configs/devices.yaml.
type CatalogDevice struct {
	Name              string          `yaml:"name" json:"name"`
	Display           string          `yaml:"display" json:"display"`
	Backend           backend.Backend `yaml:"backend" json:"backend"`
	ComputeCapability string          `yaml:"compute_capability" json:"compute_capability,omitempty"`
	Generation        string          `yaml:"generation" json:"generation,omitempty"`
	OSVersion         string          `yaml:"os_version" json:"os_version,omitempty"`
	CPUFeatures       []string        `yaml:"cpu_features" json:"cpu_features,omitempty"`
	TotalGiB          float64         `yaml:"total_gib" json:"total_gib"`
	UsableGiB         float64         `yaml:"usable_gib" json:"usable_gib"`
	UsableSource      string          `yaml:"usable_source" json:"usable_source"`
	FP32TFLOPS        *float64        `yaml:"fp32_tflops" json:"fp32_tflops"`
	FP16TFLOPS        *float64        `yaml:"fp16_tflops" json:"fp16_tflops"`
	BF16TFLOPS        *float64        `yaml:"bf16_tflops" json:"bf16_tflops"`
	FP8TFLOPS         *float64        `yaml:"fp8_tflops" json:"fp8_tflops,omitempty"`
	Int8TOPS          *float64        `yaml:"int8_tops" json:"int8_tops,omitempty"`
	BandwidthGBs      *float64        `yaml:"bandwidth_gbs" json:"bandwidth_gbs"`
	Source            string          `yaml:"source" json:"source"`
	// Aliases are the names the hardware reports (NVML/nvidia-smi,
	// amd-smi, torch.xpu, sysctl machdep.cpu.brand_string), so a probed
	// device can be found by what the machine says. Several entries may
	// share one: NVML names an RTX 4060 Ti 8GB and 16GB alike.
	Aliases []string `yaml:"aliases" json:"-"`
	// Arch is the architecture family for display (Ampere, CDNA3, Xe-HPC,
	// Apple M2); the precision rules read ComputeCapability and Generation.
	Arch string `yaml:"arch" json:"-"`
	// Unified memory is shared with the host (Apple silicon, MI300A,
	// GH200's CPU memory aside): offloading to host memory frees nothing.
	Unified bool `yaml:"unified" json:"-"`
}

// Facts are the capability-rule inputs of a catalogued device.
func (d CatalogDevice) Facts() capability.Facts {
	return capability.Facts{Backend: d.Backend, ComputeCapability: d.ComputeCapability, CPUFeatures: d.CPUFeatures,
		OSVersion: d.OSVersion, Generation: d.Generation}
}

// LoadModels parses the model catalogue strictly (unknown keys are errors,
// so a typo in the YAML fails the tests instead of vanishing).
func LoadModels(data []byte) ([]CatalogModel, error) {
	var doc struct {
		Models []CatalogModel `yaml:"models"`
	}
	if err := strictYAML(data, &doc); err != nil {
		return nil, fmt.Errorf("model catalogue: %w", err)
	}
	for _, m := range doc.Models {
		if m.Name == "" || m.Params <= 0 {
			return nil, fmt.Errorf("model catalogue: entry %q has no name or params", m.Name)
		}
	}
	return doc.Models, nil
}

// builtinDevices and builtinModels are the embedded catalogues, read once
// per process (facts read once). The device catalogue is compiled in
// (devices_gen.go, generated from configs/devices.yaml through LoadDevices
// by a test that fails when they differ): parsing its YAML took 4-5 ms, most
// of a catalogued recommend's time. Callers must not modify what they
// return.
var (
	builtinDevices = func() ([]CatalogDevice, error) { return generatedDevices, nil }
	builtinModels  = sync.OnceValues(func() ([]CatalogModel, error) { return LoadModels(configs.ModelsYAML) })
)

// Devices is the device catalogue (configs/devices.yaml). Callers must
// not modify it.
func Devices() []CatalogDevice { return generatedDevices }

// LoadDevices parses the device catalogue strictly.
func LoadDevices(data []byte) ([]CatalogDevice, error) {
	var doc struct {
		Devices []CatalogDevice `yaml:"devices"`
	}
	if err := strictYAML(data, &doc); err != nil {
		return nil, fmt.Errorf("device catalogue: %w", err)
	}
	seen := map[string]string{}
	for _, d := range doc.Devices {
		if d.Name == "" || d.Backend == "" || d.UsableGiB <= 0 || d.UsableGiB > d.TotalGiB {
			return nil, fmt.Errorf("device catalogue: entry %q needs a name, a backend and 0 < usable_gib <= total_gib", d.Name)
		}
		if d.Source == "" || d.UsableSource == "" {
			return nil, fmt.Errorf("device catalogue: entry %q needs a source and a usable_source", d.Name)
		}
		if d.Backend == backend.CUDA && d.ComputeCapability == "" {
			return nil, fmt.Errorf("device catalogue: CUDA entry %q needs a compute_capability", d.Name)
		}
		key := normalizeDeviceName(d.Name)
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("device catalogue: entry %q has the same name as %q", d.Name, prev)
		}
		seen[key] = d.Name
	}
	// An alias may be shared (several memory sizes report one name) but
	// must not be another entry's name, or a name would find two devices.
	for _, d := range doc.Devices {
		for _, a := range d.Aliases {
			if prev, clash := seen[normalizeDeviceName(a)]; clash && prev != d.Name {
				return nil, fmt.Errorf("device catalogue: alias %q of %q is the name of %q", a, d.Name, prev)
			}
		}
	}
	return doc.Devices, nil
}

func strictYAML(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// FindModel looks a name up case-insensitively; the error suggests the
// closest name.
func FindModel(list []CatalogModel, name string) (CatalogModel, error) {
	names := make([]string, len(list))
	for i, m := range list {
		if strings.EqualFold(m.Name, name) || strings.EqualFold(m.HFID, name) {
			return m, nil
		}
		names[i] = m.Name
	}
	return CatalogModel{}, unknownName("--model", name, names)
}

// FindDevice looks a catalogued device up by its name or, failing that, by
// an alias that only one entry has, ignoring case, spaces and punctuation
// ("A100-80GB", "NVIDIA A100-SXM4-80GB", "nvidia a100 sxm4 80gb"). An alias
// several entries share (one NVML name for two memory sizes) finds nothing
// here: MatchDevices lists them.
func FindDevice(list []CatalogDevice, name string) (CatalogDevice, bool) {
	key := normalizeDeviceName(name)
	if key == "" {
		return CatalogDevice{}, false
	}
	for _, d := range list {
		if normalizeDeviceName(d.Name) == key {
			return d, true
		}
	}
	if m := MatchDevices(list, name); len(m) == 1 {
		return m[0], true
	}
	return CatalogDevice{}, false
}

// MatchDevices lists the entries whose name or aliases match what a
// machine reports, in catalogue order, compared as FindDevice does. Several
// come back when the reported name does not tell memory sizes apart (an
// "Apple M2 Max" with 32, 64 or 96 GB); the caller picks by total memory.
func MatchDevices(list []CatalogDevice, reported string) []CatalogDevice {
	key := normalizeDeviceName(reported)
	if key == "" {
		return nil
	}
	var out []CatalogDevice
	for _, d := range list {
		if normalizeDeviceName(d.Name) == key || slices.ContainsFunc(d.Aliases, func(a string) bool { return normalizeDeviceName(a) == key }) {
			out = append(out, d)
		}
	}
	return out
}

// trademarks are the signs vendors print in device names.
var trademarks = strings.NewReplacer("(R)", "", "(r)", "", "(TM)", "", "(tm)", "", "®", "", "™", "")

// normalizeDeviceName keeps the letters and digits of a device name, in
// lower case: "NVIDIA GeForce RTX 3090", "nvidia geforce rtx-3090" and
// "GeForce RTX 3090" are one key. The trademark signs Intel prints
// ("Intel(R) Arc(TM) A770 Graphics") go too.
//
// A leading vendor word goes as well: older NVIDIA drivers report
// "GeForce GTX 1080 Ti" where newer ones report "NVIDIA GeForce GTX 1080 Ti",
// and rocm-smi's "Radeon RX 7900 XTX" is torch's "AMD Radeon RX 7900 XTX".
func normalizeDeviceName(s string) string {
	s = trademarks.Replace(s)
	s = strings.TrimSpace(s)
	if first, rest, ok := strings.Cut(s, " "); ok && slices.Contains([]string{"nvidia", "amd", "intel", "apple", "google"}, strings.ToLower(first)) {
		s = rest
	}
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// DeviceNames lists the catalogue's names.
func DeviceNames(list []CatalogDevice) []string {
	names := make([]string, len(list))
	for i, d := range list {
		names[i] = d.Name
	}
	return names
}

func unknownName(flag, name string, names []string) error {
	msg := fmt.Sprintf("unknown %s %q", flag, name)
	if s := suggest.Closest(name, names); s != "" {
		msg += fmt.Sprintf(": did you mean %q?", s)
	}
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	return fmt.Errorf("%s (known: %s)", msg, strings.Join(sorted, ", "))
}
