// Package configs holds the data files built into the devctl binary: the
// default configuration, the model and device catalogues, and copies of
// popular models' config.json.
package configs

import "embed"

// DefaultYAML is configs/default.yaml.
//
//go:embed default.yaml
var DefaultYAML []byte

// ModelsYAML is configs/models.yaml, the model catalogue for recommend.
//
//go:embed models.yaml
var ModelsYAML []byte

// DevicesYAML is configs/devices.yaml, the device catalogue for planning
// without the hardware.
//
//go:embed devices.yaml
var DevicesYAML []byte

// Hub holds devctl's own copies of Hugging Face models' config.json
// (hub/index.tsv maps each model id to its file), for `recommend --model
// ORG/NAME` when the Hub cannot be reached and no cache holds the model.
// They are written from testdata/models, where each file's source is
// named (go test ./internal/recommend -run TestBuiltinConfigsUpToDate
// -update).
//
//go:embed hub
var Hub embed.FS
