package recommend

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/oomsim"
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
}

// Model converts a catalogue entry for the estimator.
func (c CatalogModel) Model() oomsim.Model {
	m := oomsim.Model{Name: c.Name, Family: c.Family, Params: c.Params, HeadParams: c.HeadParams,
		BufferBytes: c.BufferBytes, LargestLayerParams: c.LargestLayerParams}
	if c.Hidden > 0 {
		m.Arch = &oomsim.Arch{Layers: c.Layers, KVLayers: c.KVLayers, Hidden: c.Hidden, Heads: c.Heads,
			KVHeads: c.KVHeads, HeadDim: c.HeadDim, FFN: c.FFN, Vocab: c.Vocab, MaxPositions: c.MaxPositions}
	}
	return m
}

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

// LoadDevices parses the device catalogue strictly.
func LoadDevices(data []byte) ([]CatalogDevice, error) {
	var doc struct {
		Devices []CatalogDevice `yaml:"devices"`
	}
	if err := strictYAML(data, &doc); err != nil {
		return nil, fmt.Errorf("device catalogue: %w", err)
	}
	for _, d := range doc.Devices {
		if d.Name == "" || d.Backend == "" || d.UsableGiB <= 0 || d.UsableGiB > d.TotalGiB {
			return nil, fmt.Errorf("device catalogue: entry %q needs a name, a backend and 0 < usable_gib <= total_gib", d.Name)
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

// FindDevice looks a catalogued device up case-insensitively.
func FindDevice(list []CatalogDevice, name string) (CatalogDevice, bool) {
	for _, d := range list {
		if strings.EqualFold(d.Name, name) {
			return d, true
		}
	}
	return CatalogDevice{}, false
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
	if s := Closest(name, names); s != "" {
		msg += fmt.Sprintf(": did you mean %q?", s)
	}
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	return fmt.Errorf("%s (known: %s)", msg, strings.Join(sorted, ", "))
}

// Closest returns the candidate nearest to name by edit distance, or ""
// when nothing is reasonably close (more than half the name differs).
func Closest(name string, candidates []string) string {
	name = strings.ToLower(name)
	// A name cut short ("a100", "llama-3") means one that starts with it,
	// even when a shorter name is fewer edits away ("a10g").
	if len(name) >= 2 {
		for _, c := range candidates {
			if strings.HasPrefix(strings.ToLower(c), name) {
				return c
			}
		}
	}
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := editDistance(name, strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	if bestD > (len([]rune(name))+1)/2+1 {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance over runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 256 || len(rb) > 256 {
		return 1 << 20
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
