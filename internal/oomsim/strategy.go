package oomsim

// Memory strategies: how much of a device's memory a framework is told it
// may use (device.memory_strategy). custom takes device.memory_fraction.
const (
	Conservative = "conservative"
	Balanced     = "balanced"
	Aggressive   = "aggressive"
	Custom       = "custom"
)

// Strategies lists the strategies in the order help texts show them.
var Strategies = []string{Conservative, Balanced, Aggressive, Custom}

// StrategyFraction is the share of device memory each named strategy
// uses; the one table config, recommend and run read.
var StrategyFraction = map[string]float64{
	Conservative: 0.60,
	Balanced:     0.75,
	Aggressive:   0.90,
}
