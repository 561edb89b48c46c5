// Package configs holds the data files built into the devctl binary: the
// default configuration and the model and device catalogues.
package configs

import _ "embed"

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
