// Command mksnap writes the fixture snapshots under testdata/snapshots/:
// one `devctl snapshot --redact-host` archive per fixture machine, made by
// running the real probe drivers and doctor checks through a
// snapshot.Recorder over a host assembled from the repository's fixtures
// (accelerator and CPU trees, NVML and nvidia-smi answers, Mac sysctl and
// ioreg answers). It is how every device family gets a `--from` test
// without the hardware.
//
// Run it from the repository root:
//
//	go run ./internal/snapshot/internal/mksnap            # write all
//	go run ./internal/snapshot/internal/mksnap -check     # compare, write nothing
//	go run ./internal/snapshot/internal/mksnap -only mac-m4-macos15,tpu-v6e-8
//	go run ./internal/snapshot/internal/mksnap -list
//
// The output is reproducible: the same fixtures and drivers give the same
// bytes (fixed time, sorted archive, fixed identity and environment).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/snapshot"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("mksnap", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fixtures := fl.String("fixtures", "testdata", "the repository's testdata directory")
	out := fl.String("out", filepath.Join("testdata", "snapshots"), "where to write the archives")
	only := fl.String("only", "", "comma-separated machine names (default: all)")
	check := fl.Bool("check", false, "regenerate in memory and report archives that differ; write nothing")
	list := fl.Bool("list", false, "list the machines and what each is built from")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "mksnap: unexpected arguments %q\n", fl.Args())
		return 2
	}
	ms, err := selectMachines(*only)
	if err != nil {
		fmt.Fprintf(stderr, "mksnap: %v\n", err)
		return 2
	}
	if *list {
		for _, m := range ms {
			fmt.Fprintf(stdout, "%s.tar.gz\t%s\t%s\n", m.Name, m.Family, m.From)
		}
		return 0
	}
	ctx := context.Background()
	drift := 0
	for _, m := range ms {
		h, err := m.Build(*fixtures)
		if err != nil {
			fmt.Fprintf(stderr, "mksnap: %s: %v\n", m.Name, err)
			return 1
		}
		r, err := Record(ctx, h, true)
		if err != nil {
			fmt.Fprintf(stderr, "mksnap: %s: %v\n", m.Name, err)
			return 1
		}
		dst := filepath.Join(*out, m.Name+".tar.gz")
		if *check {
			old, err := os.ReadFile(dst)
			switch {
			case err != nil:
				fmt.Fprintf(stdout, "%s: missing (%v)\n", dst, errors.Unwrap(err))
				drift++
			case !bytes.Equal(old, r.Archive):
				fmt.Fprintf(stdout, "%s: differs from a fresh recording\n", dst)
				drift++
			default:
				fmt.Fprintf(stdout, "%s: up to date\n", dst)
			}
			continue
		}
		if err := os.WriteFile(dst, r.Archive, 0o644); err != nil {
			fmt.Fprintf(stderr, "mksnap: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", dst, len(r.Archive))
	}
	if drift > 0 {
		fmt.Fprintf(stderr, "mksnap: %d snapshot(s) out of date: run go run ./internal/snapshot/internal/mksnap\n", drift)
		return 1
	}
	return 0
}

func selectMachines(only string) ([]Machine, error) {
	if only == "" {
		return Machines, nil
	}
	var out []Machine
	for _, name := range strings.Split(only, ",") {
		name = strings.TrimSuffix(strings.TrimSpace(name), ".tar.gz")
		found := false
		for _, m := range Machines {
			if m.Name == name {
				out = append(out, m)
				found = true
			}
		}
		if !found {
			names := make([]string, len(Machines))
			for i, m := range Machines {
				names[i] = m.Name
			}
			return nil, fmt.Errorf("unknown machine %q: want one of %s", name, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// Recording is what one recording run produced.
type Recording struct {
	Archive  []byte
	Report   *probe.Report
	Outcomes []probe.Outcome
	Checks   []doctor.Outcome
}

// Timeout bounds each driver and check, as --timeout does.
const Timeout = 10 * time.Second

// Factory is the command factory for a host: default configuration (no
// config file, no DEVCTL_* variables), the fixed clock.
func Factory(h *host.Host) *cmdutil.Factory {
	ios, _, _, _ := iostreams.Test()
	noEnv := func(string) (string, bool) { return "", false }
	return &cmdutil.Factory{
		IO:        ios,
		Version:   Version,
		Global:    &cmdutil.GlobalOptions{Timeout: Timeout, ConfigFlags: map[string]config.Flag{}},
		Now:       func() time.Time { return Created },
		LookupEnv: noEnv,
		HostFunc:  func() (*host.Host, error) { return h, nil },
		ConfigFunc: func(flags map[string]config.Flag) (*config.Config, error) {
			return config.Load(config.LoadOptions{LookupEnv: noEnv, Flags: flags})
		},
	}
}

// Record does what `devctl snapshot` does (internal/cmd/snapshot.Run): the
// probe with every driver, then every doctor check, all through one
// Recorder, then Write.
func Record(ctx context.Context, base *host.Host, redact bool) (*Recording, error) {
	rec := snapshot.NewRecorder(base)
	f := Factory(rec.Host())
	rep, outcomes, err := cmdutil.RunProbe(ctx, f, nil)
	if err != nil && rep == nil {
		return nil, err
	}
	cfg, cfgErr := f.Config()
	env := &doctor.Env{Host: rec.Host(), Report: rep, Outcomes: outcomes, Config: cfg, ConfigErr: cfgErr}
	checks := doctor.Run(ctx, doctor.All(), env, doctor.Options{Timeout: f.Global.Timeout})
	var buf bytes.Buffer
	if _, err := rec.Write(&buf, snapshot.WriteOptions{RedactHost: redact, DevctlVersion: Version, Created: Created}); err != nil {
		return nil, err
	}
	return &Recording{Archive: buf.Bytes(), Report: rep, Outcomes: outcomes, Checks: checks}, nil
}
