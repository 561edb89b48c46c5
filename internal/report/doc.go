// Package report holds what every table renderer shares: the terminal
// Style, the plain ASCII RenderTable and Clean for text read from the
// machine. Each feature's table lives beside its command
// (internal/cmd/probe/table.go, ...), and JSON and YAML go through
// internal/output, so this package imports no feature.
package report
