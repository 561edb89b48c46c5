//go:build ignore

// libs.go plus prometheus/client_golang, which devctl serve links into
// every command. For scripts/bench-startup.sh.
package main

import (
	"os"

	_ "github.com/NVIDIA/go-nvml/pkg/nvml"
	_ "github.com/charmbracelet/lipgloss"
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/spf13/cobra"
	_ "github.com/spf13/viper"
)

func main() { os.Stdout.WriteString("ok\n") }
