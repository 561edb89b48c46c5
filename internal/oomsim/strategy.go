package oomsim

// Strategy is a memory strategy: how much of a device's memory a framework
// is told it may use (device.memory_strategy). Custom takes
// device.memory_fraction.
type Strategy string

// Memory strategies.
const (
	Conservative Strategy = "conservative"
	Balanced     Strategy = "balanced"
	Aggressive   Strategy = "aggressive"
	Custom       Strategy = "custom"
)

// Strategies lists the strategies in the order help texts show them.
var Strategies = []Strategy{Conservative, Balanced, Aggressive, Custom}

// strategyFraction is the share of device memory each named strategy
// uses: the one table config, recommend and run read (through Fraction).
var strategyFraction = map[Strategy]float64{
	Conservative: 0.60,
	Balanced:     0.75,
	Aggressive:   0.90,
}

// Fraction is the share of device memory s uses; ok is false for Custom
// (its fraction is configured) and unknown strategies.
func (s Strategy) Fraction() (f float64, ok bool) {
	f, ok = strategyFraction[s]
	return f, ok
}
