// Package bench measures what a machine really delivers: peak CPU compute
// with hand-written SIMD kernels, memory bandwidth with STREAM's four
// kernels, and the PCIe links of its accelerators, each beside the
// theoretical figure the hardware should reach.
//
// The package never prints and never reads flags: `devctl bench` gathers the
// machine's facts (Facts), calls Measure and renders the returned Run. Kernels
// are chosen at run time from the CPU's features (Plan) and every kernel is
// checked against a pure-Go reference before it is timed, so a figure is
// never reported for a loop that computed the wrong thing.
package bench
