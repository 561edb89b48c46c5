package probe

import "github.com/devctl/devctl/internal/config"

// OptionsFrom takes the probe's selection settings from the effective
// configuration, so every command that probes selects the same way. The
// caller adds what is not configuration: the timeout, the version, the
// PCI sweep.
func OptionsFrom(cfg *config.Config) Options {
	d := cfg.Device
	return Options{
		Preferred:        d.Preferred,
		PlatformPriority: d.PlatformPriority,
		FallbackEnabled:  d.FallbackEnabled,
		MemoryStrategy:   string(d.MemoryStrategy),
		MemoryFraction:   d.MemoryFraction,
	}
}
