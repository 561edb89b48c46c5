//go:build tools

// Package tools pins dependencies that helpers are wiring in; removed once used.
package tools

import (
	_ "github.com/NVIDIA/go-nvml/pkg/nvml"
	_ "github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/prometheus/procfs"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/spf13/cobra"
	_ "golang.org/x/sys/unix"
)
