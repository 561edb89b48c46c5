//go:build ignore

// A program that only links the libraries devctl requires (cobra, viper,
// lipgloss, tablewriter, go-nvml): their package initialisation is a floor
// no devctl command can go below. For scripts/bench-startup.sh.
package main

import (
	"os"

	_ "github.com/NVIDIA/go-nvml/pkg/nvml"
	_ "github.com/charmbracelet/lipgloss"
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/spf13/cobra"
	_ "github.com/spf13/viper"
)

func main() { os.Stdout.WriteString("ok\n") }
