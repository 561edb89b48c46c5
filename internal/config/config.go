// Package config loads devctl's layered settings: built-in defaults, a user
// file, DEVCTL_* environment variables and flags, in rising order of
// precedence. It validates every value and remembers where each came from.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/viper"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/userfile"
)

// ErrInvalid marks a bad user-supplied value; the CLI maps it to exit code 2.
var ErrInvalid = errors.New("invalid configuration")

// Device is the device section of the configuration.
type Device struct {
	Preferred        string               `json:"preferred" yaml:"preferred"`
	Precision        capability.Precision `json:"precision" yaml:"precision"`
	FallbackEnabled  bool                 `json:"fallback_enabled" yaml:"fallback_enabled"`
	MemoryStrategy   oomsim.Strategy      `json:"memory_strategy" yaml:"memory_strategy"`
	MemoryFraction   float64              `json:"memory_fraction" yaml:"memory_fraction"`
	PlatformPriority []backend.Backend    `json:"platform_priority" yaml:"platform_priority"`
	// AllowCPU lets devctl run's last recovery step move the command to
	// the CPU, as --allow-cpu does (seed 004's ALLOW_CPU).
	AllowCPU bool `json:"allow_cpu" yaml:"allow_cpu"`
}

// Config is the effective configuration.
type Config struct {
	Device Device
	// Sources maps each key ("device.preferred") to where its value came
	// from.
	Sources map[string]Source
	// File is the user file that was read, or "".
	File string
}

// Layer is one level of the configuration, in rising precedence.
type Layer int

// The layers: a value from a higher layer wins.
const (
	LayerDefault Layer = iota // configs/default.yaml, built in
	LayerFile                 // the user file
	LayerEnv                  // a DEVCTL_* variable
	LayerFlag                 // a command-line flag
)

// Source says where a value came from: its layer and, for the layers
// above the defaults, the file path, variable or flag name. Implied marks
// a value nobody set that another setting decided: a memory fraction set
// above the strategy makes the strategy custom, a strategy set above the
// fraction fixes the fraction; the source is then the deciding setting's.
type Source struct {
	Layer   Layer
	Name    string
	Implied bool
}

// Default is the source of a value nobody set.
var Default = Source{Layer: LayerDefault}

// String is the source as `config show` prints it: "default",
// "file <path>", "env DEVCTL_DEVICE" or "flag --device", after "implied by "
// for an implied value ("implied by flag --memory-fraction").
func (s Source) String() string {
	var where string
	switch s.Layer {
	case LayerFile:
		where = "file " + s.Name
	case LayerEnv:
		where = "env " + s.Name
	case LayerFlag:
		where = "flag " + s.Name
	default:
		where = "default"
	}
	if s.Implied {
		return "implied by " + where
	}
	return where
}

// MarshalText writes the source as String does, for JSON and YAML.
func (s Source) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Keys lists every configuration key, in display order.
var Keys = []string{
	"device.preferred", "device.precision", "device.fallback_enabled",
	"device.memory_strategy", "device.memory_fraction",
	"device.platform_priority", "device.allow_cpu",
}

// EnvVars maps keys to the environment variables that set them.
var EnvVars = map[string]string{
	"device.preferred":        "DEVCTL_DEVICE",
	"device.precision":        "DEVCTL_PRECISION",
	"device.fallback_enabled": "DEVCTL_FALLBACK_ENABLED",
	"device.memory_strategy":  "DEVCTL_MEMORY_STRATEGY",
	"device.memory_fraction":  "DEVCTL_MEMORY_FRACTION",
	"device.allow_cpu":        "DEVCTL_ALLOW_CPU",
}

// Accepted values.
var (
	Precisions = append([]capability.Precision{capability.Auto}, capability.Precisions...)
	Strategies = oomsim.Strategies
)

// LoadOptions says where to look. Library code never reads the process
// environment: the caller passes a lookup function.
type LoadOptions struct {
	// File is --config; empty means the XDG default, if it exists.
	File string
	// LookupEnv reads environment variables.
	LookupEnv func(string) (string, bool)
	// Flags are values given on the command line, by key, with the flag's
	// name for messages.
	Flags map[string]Flag
}

// Flag is one command-line override.
type Flag struct {
	Name  string // "--device"
	Value string
}

// DefaultFile returns $XDG_CONFIG_HOME/devctl/config.yaml (or ~/.config/...).
func DefaultFile(lookup func(string) (string, bool)) string {
	if dir, ok := lookup("XDG_CONFIG_HOME"); ok && dir != "" {
		return filepath.Join(dir, "devctl", "config.yaml")
	}
	if home, ok := lookup("HOME"); ok && home != "" {
		return filepath.Join(home, ".config", "devctl", "config.yaml")
	}
	return ""
}

// Defaults are the built-in settings, as configs/default.yaml documents
// them with its comments (TestDefaultsAreDefaultYAML keeps the two equal).
// A Go value costs nothing to load: parsing the YAML cost every devctl
// start 0.07-0.13 ms, most of a config load that finds no user file.
func Defaults() map[string]any {
	return map[string]any{"device": map[string]any{
		"preferred":         "auto",
		"precision":         "auto",
		"fallback_enabled":  true,
		"memory_strategy":   "balanced",
		"memory_fraction":   0.75,
		"platform_priority": []any{"cuda", "rocm", "xla", "neuron", "xpu", "mps", "cpu"},
		"allow_cpu":         false,
	}}
}

// Load builds the effective configuration: viper merges the built-in
// defaults, the user file, DEVCTL_* variables and flags, and unmarshals the
// result once into a typed struct whose decode hooks check every value.
// The user file is first decoded alone, so that an unknown key or a value
// of the wrong shape is refused with the file's name even when a higher
// layer sets the same key.
func Load(opts LoadOptions) (*Config, error) {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	v := viper.New()
	if err := v.MergeConfigMap(Defaults()); err != nil {
		return nil, fmt.Errorf("built-in defaults: %w", err)
	}
	cfg := &Config{Sources: map[string]Source{}}
	for _, k := range Keys {
		cfg.Sources[k] = Default
	}

	file, explicit := opts.File, opts.File != ""
	if !explicit {
		file = DefaultFile(lookup)
	}
	if file != "" {
		data, err := readFile(file)
		switch {
		case err == nil:
			layer, keys, err := readLayer(file, data)
			if err != nil {
				return nil, err
			}
			if err := v.MergeConfigMap(layer); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, file, err)
			}
			cfg.File = file
			for _, k := range keys {
				cfg.Sources[k] = Source{Layer: LayerFile, Name: file}
			}
		case explicit:
			return nil, fmt.Errorf("%w: --config %s: %v", ErrInvalid, file, err)
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("%w: config file %s: %v", ErrInvalid, file, err)
		}
	}
	for _, k := range Keys {
		name, ok := EnvVars[k]
		if !ok {
			continue
		}
		if val, set := lookup(name); set && strings.TrimSpace(val) != "" {
			v.Set(k, strings.TrimSpace(val))
			cfg.Sources[k] = Source{Layer: LayerEnv, Name: name}
		}
	}
	for k, f := range opts.Flags {
		v.Set(k, f.Value)
		cfg.Sources[k] = Source{Layer: LayerFlag, Name: f.Name}
	}
	var s settings
	if err := v.Unmarshal(&s, decoderOptions(checkValues, nil)...); err != nil {
		return nil, describe(err, cfg.Sources)
	}
	cfg.Device = s.Device.public()
	if err := resolveStrategy(&cfg.Device, cfg.Sources); err != nil {
		return nil, err
	}
	return cfg, nil
}

// MaxFileBytes bounds the user file: a settings file is a few hundred
// bytes, and a wrong --config (a log, /dev/zero) must not be read whole.
const MaxFileBytes = 1 << 20

// readFile reads at most MaxFileBytes of a user file. Pipes are read as
// they come, so --config <(...) works.
func readFile(name string) ([]byte, error) {
	return userfile.ReadAs(name, MaxFileBytes, "a devctl config file")
}

// resolveStrategy ties the strategy to the fraction. A named strategy fixes
// the fraction. A fraction set at a higher layer than the strategy (a flag
// over a file, say) wins and makes the strategy custom; a strategy set at a
// higher layer wins over a fraction. Both set at the same layer and
// disagreeing is an error. The value one setting decides for the other
// takes the deciding setting's source, marked Implied, so that `config
// show` names what made the strategy custom (the fraction's flag, not the
// strategy's variable it overrode).
func resolveStrategy(d *Device, sources map[string]Source) error {
	if d.MemoryStrategy == oomsim.Custom {
		return nil
	}
	want, _ := d.MemoryStrategy.Fraction()
	frac, strat := sources["device.memory_fraction"], sources["device.memory_strategy"]
	switch {
	case frac.Layer > strat.Layer:
		d.MemoryStrategy = oomsim.Custom
		sources["device.memory_strategy"] = Source{Layer: frac.Layer, Name: frac.Name, Implied: true}
	case frac.Layer == strat.Layer && frac.Layer > LayerDefault && d.MemoryFraction != want:
		return fmt.Errorf("%w: device.memory_fraction %g conflicts with device.memory_strategy %s (%g), both from %s: set memory_strategy to custom to use your own fraction",
			ErrInvalid, d.MemoryFraction, d.MemoryStrategy, want, strat)
	default:
		d.MemoryFraction = want
		if strat.Layer > frac.Layer {
			sources["device.memory_fraction"] = Source{Layer: strat.Layer, Name: strat.Name, Implied: true}
		}
	}
	return nil
}

// ParseFraction accepts a number in (0, 1].
func ParseFraction(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f != f {
		return 0, errors.New("want a number greater than 0 and at most 1 (e.g. 0.75)")
	}
	if f <= 0 || f > 1 {
		return 0, errors.New("out of range: want a number greater than 0 and at most 1 (e.g. 0.75)")
	}
	return f, nil
}

// Value returns a key's effective value as text, for `config show`.
func (c *Config) Value(key string) string {
	d := c.Device
	switch key {
	case "device.preferred":
		return d.Preferred
	case "device.precision":
		return string(d.Precision)
	case "device.fallback_enabled":
		return strconv.FormatBool(d.FallbackEnabled)
	case "device.allow_cpu":
		return strconv.FormatBool(d.AllowCPU)
	case "device.memory_strategy":
		return string(d.MemoryStrategy)
	case "device.memory_fraction":
		return strconv.FormatFloat(d.MemoryFraction, 'g', -1, 64)
	case "device.platform_priority":
		names := make([]string, len(d.PlatformPriority))
		for i, b := range d.PlatformPriority {
			names[i] = string(b)
		}
		return strings.Join(names, ",")
	}
	return ""
}
