package recommend

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/oomsim"
)

// dtypeBytes is the storage of the dtypes config.json's torch_dtype names.
var dtypeBytes = map[string]int64{"float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1}

// ModelFromFiles sizes a model from its config.json and, when it has one,
// its model.safetensors.index.json total (the exact bytes of the stored
// tensors). A family devctl counts is counted exactly and the index checks
// the count; any other family is sized from the index alone (total ÷ the
// bytes of torch_dtype), with a shape derived from published architectures
// of that size. Notes say which was done.
func ModelFromFiles(name string, config []byte, indexTotal int64) (oomsim.Model, []string, error) {
	config = nullNonFinite(config) // every reader below sees Python's Infinity as null
	m, err := ParseHFConfig(config)
	var notes []string
	stored, note, qerr := ParseStoredWeights(config)
	if err == nil && qerr != nil {
		return oomsim.Model{}, nil, qerr
	}
	if note != "" {
		notes = append(notes, note)
	}
	var head struct {
		ModelType  string `json:"model_type"`
		TorchDtype string `json:"torch_dtype"`
	}
	_ = json.Unmarshal(config, &head)
	bytesPer := dtypeBytes[strings.ToLower(head.TorchDtype)]
	switch {
	case err == nil:
		if m.Name == "" {
			m.Name = name
		}
		m.Stored = stored
		if indexTotal > 0 && bytesPer > 0 && stored == nil {
			counted := m.Params * bytesPer
			switch d := indexTotal - counted; {
			case d == 0:
				notes = append(notes, fmt.Sprintf("the safetensors index's total_size (%d bytes) is %s × %d B: the count is exact", indexTotal, head.TorchDtype, m.Params))
			case d > 0 && d <= m.Params*bytesPer/20:
				notes = append(notes, fmt.Sprintf("the safetensors index stores %d bytes more than the %d parameters at %s (buffers or an untied head copy)", d, m.Params, head.TorchDtype))
			default:
				notes = append(notes, fmt.Sprintf("the safetensors index's total_size (%d bytes) does not match %d parameters at %s: the checkpoint may be quantised or differ from its config", indexTotal, m.Params, head.TorchDtype))
			}
		}
		return m, notes, nil
	case errors.Is(err, ErrUnsupportedFamily) && indexTotal > 0 && bytesPer > 0:
		n := indexTotal / bytesPer
		if n <= 0 || n > MaxParams {
			return oomsim.Model{}, nil, fmt.Errorf("the safetensors index's total_size %d is not a model size", indexTotal)
		}
		if stored != nil {
			// The index holds the packed bytes, not 16-bit parameters.
			return oomsim.Model{}, nil, fmt.Errorf("model_type %q is not one devctl counts, and its checkpoint is quantised (%s), so the safetensors index does not give the parameter count: give --model-params", head.ModelType, stored.From)
		}
		m = oomsim.Model{Name: name, Params: n}
		notes = append(notes, fmt.Sprintf("model_type %q is not one devctl counts: %s parameters from the safetensors index (%d bytes of %s); the shape is assumed", head.ModelType, FormatParams(n), indexTotal, head.TorchDtype))
		return m, notes, nil
	}
	return oomsim.Model{}, nil, err
}
