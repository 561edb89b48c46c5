// Package root assembles the devctl command tree and maps errors to exit
// codes in one place.
package root

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/cmd/bench"
	configcmd "github.com/devctl/devctl/internal/cmd/config"
	"github.com/devctl/devctl/internal/cmd/doctor"
	"github.com/devctl/devctl/internal/cmd/factory"
	historycmd "github.com/devctl/devctl/internal/cmd/history"
	probecmd "github.com/devctl/devctl/internal/cmd/probe"
	"github.com/devctl/devctl/internal/cmd/recommend"
	runcmd "github.com/devctl/devctl/internal/cmd/run"
	schemacmd "github.com/devctl/devctl/internal/cmd/schema"
	servecmd "github.com/devctl/devctl/internal/cmd/serve"
	snapshotcmd "github.com/devctl/devctl/internal/cmd/snapshot"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/interrupt"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/output"
	"github.com/devctl/devctl/internal/procgroup"
	"github.com/devctl/devctl/internal/safetext"
	"github.com/devctl/devctl/internal/state"
	"github.com/devctl/devctl/internal/target"
)

// Version is set at build time with -ldflags "-X .../root.Version=...".
// Left at "dev", the version comes from the build info (see
// ResolveVersion), so `go install ...@v1.2.3` reports v1.2.3.
var Version = "dev"

// ResolveVersion picks what `devctl --version` says: the ldflags value
// when one was set; else the module version the go command recorded
// (`go install github.com/devctl/devctl/cmd/devctl@v1.2.3`, or a
// pseudo-version for @latest on an untagged commit); else, in a local
// build, "dev-" and the VCS revision (with "-dirty" for uncommitted
// changes); else "dev".
func ResolveVersion(ldflags string, info *debug.BuildInfo, ok bool) string {
	if ldflags != "" && ldflags != "dev" {
		return ldflags
	}
	if !ok || info == nil {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "dev-" + rev
}

// version is this binary's version.
var version = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	return ResolveVersion(Version, info, ok)
})

// configKeyAnnotation marks flags that set a configuration key.
const configKeyAnnotation = "devctl/config-key"

// NewCmdRoot builds the command tree. Main adds the flag values'
// completion functions (registerCompletions) when the shell asks for them.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command { return newCmdRoot(f, nil, true) }

// newCmdRoot builds the tree with the subcommands args can reach
// (reachable), or every one when all is set.
func newCmdRoot(f *cmdutil.Factory, args []string, all bool) *cobra.Command {
	g := f.Global
	cmd := &cobra.Command{
		Use:   "devctl",
		Short: "Know your ML compute devices: probe, recommend, doctor, bench",
		Long: `devctl tells you what compute devices a machine has (NVIDIA CUDA, AMD ROCm,
Intel XPU, Google TPU, AWS Neuron, Apple MPS, the CPU), what each can do, how to
configure a framework for a model, how fast the devices really are, and what is
wrong when things break.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	cmd.SetIn(f.IO.In)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &cmdutil.FlagError{Err: fmt.Errorf("%w (see 'devctl %s --help')", err, strings.TrimPrefix(c.CommandPath(), "devctl "))}
	})

	pf := cmd.PersistentFlags()
	pf.StringVar(&g.Sysroot, "sysroot", "", "read /proc, /sys and /dev under this directory instead of / (env DEVCTL_SYSROOT)")
	pf.StringVar(&g.From, "from", "", "replay a snapshot file made by 'devctl snapshot'")
	pf.StringVar(&g.Config, "config", "", "config file (default $XDG_CONFIG_HOME/devctl/config.yaml)")
	pf.BoolVar(&g.NoColor, "no-color", false, "plain output without colours (also NO_COLOR)")
	pf.DurationVar(&g.Timeout, "timeout", 5*time.Second, "deadline for each driver and program")
	pf.StringVar(&g.NvidiaSMI, "nvidia-smi", "", "path of nvidia-smi for the fallback when NVML cannot load")

	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if g.NoColor {
			f.IO.DisableColor()
		}
		g.SysrootFrom = "--sysroot"
		if g.Sysroot == "" {
			g.Sysroot, g.SysrootFrom = f.Getenv("DEVCTL_SYSROOT"), "DEVCTL_SYSROOT"
		}
		if g.Timeout <= 0 {
			return cmdutil.Usagef("invalid --timeout %s: want a positive duration such as 5s or 500ms", g.Timeout)
		}
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			if key, ok := fl.Annotations[configKeyAnnotation]; ok && fl.Changed {
				g.ConfigFlags[key[0]] = config.Flag{Name: "--" + fl.Name, Value: fl.Value.String()}
			}
		})
		return nil
	}

	var only map[string]bool
	if !all {
		only = reachable(args, pf)
	}
	for _, sc := range subcommands {
		if only == nil || only[sc.name] {
			cmd.AddCommand(sc.build(f))
		}
	}
	strictHelpAndCompletion(cmd)
	suggestSubcommands(cmd)
	// run forwards signals to its job and serve shuts down gracefully on
	// them: each owns its signals. Every other command follows the one
	// policy of internal/interrupt (set up in Main).
	for _, c := range cmd.Commands() {
		if c.Name() == "run" || c.Name() == "serve" {
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[ownsSignalsAnnotation] = "true"
		}
	}
	return cmd
}

// subcommands are devctl's commands in the order help lists them. The
// settings flags sit on the commands that honour them (a flag a command
// ignores would only mislead): probe reports the strategy and fraction and
// selects with fallback; recommend and run plan with all four; doctor plans
// an out-of-memory fit with precision and fallback; config show shows them
// all; serve reports what probe reports.
var subcommands = []struct {
	name  string
	build func(*cmdutil.Factory) *cobra.Command
}{
	{"probe", func(f *cmdutil.Factory) *cobra.Command {
		c := probecmd.NewCmdProbe(f, nil)
		DeviceFlag(c)
		SettingFlags(c, "memory-strategy", "memory-fraction", "fallback")
		return c
	}},
	{"config", func(f *cmdutil.Factory) *cobra.Command {
		c := configcmd.NewCmdConfig(f, nil)
		if show, _, err := c.Find([]string{"show"}); err == nil && show != c {
			SettingFlags(show, "precision", "memory-strategy", "memory-fraction", "fallback")
		}
		return c
	}},
	{"recommend", func(f *cmdutil.Factory) *cobra.Command {
		c := recommend.NewCmdRecommend(f, nil)
		SettingFlags(c, "precision", "memory-strategy", "memory-fraction", "fallback")
		return c
	}},
	{"doctor", func(f *cmdutil.Factory) *cobra.Command {
		c := doctor.NewCmdDoctor(f, nil)
		DeviceFlag(c)
		SettingFlags(c, "precision", "fallback")
		return c
	}},
	{"bench", func(f *cmdutil.Factory) *cobra.Command { return bench.NewCmdBench(f, nil) }},
	{"snapshot", func(f *cmdutil.Factory) *cobra.Command { return snapshotcmd.NewCmdSnapshot(f, nil) }},
	{"schema", func(f *cmdutil.Factory) *cobra.Command { return schemacmd.NewCmdSchema(f, nil) }},
	{"history", func(f *cmdutil.Factory) *cobra.Command { return historycmd.NewCmdHistory(f, nil) }},
	{"serve", func(f *cmdutil.Factory) *cobra.Command {
		c := servecmd.NewCmdServe(f, nil)
		SettingFlags(c, "memory-strategy", "memory-fraction", "fallback")
		return c
	}},
	{"run", func(f *cmdutil.Factory) *cobra.Command {
		c := runcmd.NewCmdRun(f, nil)
		DeviceFlag(c)
		SettingFlags(c, "precision", "memory-strategy", "memory-fraction", "fallback")
		return c
	}},
	{"version", newCmdVersion},
}

// reachable names the subcommands args can reach, so that Main builds
// only those (each command's flags cost allocations at every start): the
// one named by the first word that is not a flag or a global flag's value,
// or none for a bare --version. Anything else (no command, help,
// completion, an unknown word that needs suggestions) gets them all (nil).
func reachable(args []string, global *pflag.FlagSet) map[string]bool {
	takesValue := func(a string) bool {
		fl := global.Lookup(strings.TrimPrefix(a, "--"))
		return strings.HasPrefix(a, "--") && !strings.Contains(a, "=") && fl != nil && fl.NoOptDefVal == ""
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return nil
		case takesValue(a):
			i++ // its value is the next word
		case strings.HasPrefix(a, "-"):
		default:
			for _, sc := range subcommands {
				if sc.name == a {
					return map[string]bool{a: true}
				}
			}
			return nil
		}
	}
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-v") {
		return map[string]bool{}
	}
	return nil
}

// ownsSignalsAnnotation marks a command that handles SIGINT, SIGTERM and
// SIGHUP itself.
const ownsSignalsAnnotation = "devctl/owns-signals"

// strictHelpAndCompletion makes `devctl help bogus` and `devctl completion
// bogus` usage errors (exit 2): cobra's own print a note or the help and
// exit 0, so a script with a typo goes on as if it had worked.
func strictHelpAndCompletion(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			run := c.Run
			c.Run = nil
			c.RunE = func(c *cobra.Command, args []string) error {
				if len(args) > 0 {
					if t, rest, err := root.Find(args); err != nil || t == nil || t == root || len(rest) > 0 {
						return cmdutil.Usagef("unknown help topic %q: want a command name (see devctl help)", strings.Join(args, " "))
					}
				}
				run(c, args)
				return nil
			}
		case "completion":
			// A command with subcommands and no Run of its own prints its
			// help for any word; give it one that refuses unknown shells.
			c.RunE = func(c *cobra.Command, args []string) error {
				if len(args) > 0 {
					return cmdutil.Usagef("unknown shell %q for completion: want bash, zsh, fish or powershell", args[0])
				}
				return c.Help()
			}
		}
	}
}

// DeviceFlag adds --device as an override of device.preferred.
func DeviceFlag(cmd *cobra.Command) {
	configFlag(cmd.Flags(), "device", "device.preferred", "device to use: auto, "+backend.Help()+", or an id such as cuda:1 (env DEVCTL_DEVICE)")
}

// settingFlags are the flags that set a configuration key besides
// --device, each with the key it sets and its help.
var settingFlags = map[string][2]string{
	"precision":       {"device.precision", "precision: auto, fp32, fp16, bf16, 8bit, 4bit (env DEVCTL_PRECISION)"},
	"memory-strategy": {"device.memory_strategy", "memory strategy: conservative, balanced, aggressive, custom (env DEVCTL_MEMORY_STRATEGY)"},
	"memory-fraction": {"device.memory_fraction", "memory fraction in (0,1] for the custom strategy (env DEVCTL_MEMORY_FRACTION)"},
	"fallback":        {"device.fallback_enabled", "fall back to another device when the preferred one is missing: true or false (env DEVCTL_FALLBACK_ENABLED)"},
}

// SettingFlags adds the named settings flags to cmd, marked with the
// configuration key each sets: PersistentPreRunE turns the ones given
// into the configuration's flag layer.
func SettingFlags(cmd *cobra.Command, names ...string) {
	for _, n := range names {
		s, ok := settingFlags[n]
		if !ok {
			panic("root: no settings flag " + n)
		}
		configFlag(cmd.Flags(), n, s[0], s[1])
	}
}

func configFlag(fs *pflag.FlagSet, name, key, usage string) {
	fs.String(name, "", usage)
	_ = fs.SetAnnotation(name, configKeyAnnotation, []string{key})
}

// Main runs devctl with args and returns the process exit code. It is the
// only place that decides exit codes.
func Main(args []string, io *iostreams.IOStreams, lookupEnv func(string) (string, bool)) int {
	stopWatch := func() {}
	f := factory.New(io, lookupEnv, version())
	warnEnvTypos(io.ErrOut, os.Environ(), lookupEnv)
	cmd := newCmdRoot(f, args, false)
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		// Only the shell's completion requests need the flag values' completion
		// functions; registering them walks every flag of the tree.
		registerCompletions(cmd)
	}
	cmd.SetArgs(args)
	// Whatever way Main returns, no program devctl started outlives it.
	defer procgroup.KillAll()
	started := false
	var watched context.Context
	prev := cmd.PersistentPreRunE
	cmd.PersistentPreRunE = func(c *cobra.Command, a []string) error {
		started = true
		if c.Annotations[ownsSignalsAnnotation] == "" {
			ctx, stop := interrupt.Watch(c.Context())
			c.SetContext(ctx)
			watched, stopWatch = ctx, stop
		}
		return prev(c, a)
	}
	err := cmd.ExecuteContext(context.Background())
	stopWatch()
	// A cancelled command is not a passed one: a signal decides the exit
	// code, whatever the command returned.
	if watched != nil {
		if in, ok := interrupt.From(watched); ok {
			fmt.Fprintf(io.ErrOut, "devctl: %s\n", in.Error())
			return in.Code()
		}
	}
	if err == nil {
		return cmdutil.ExitOK
	}
	code := ExitCode(err)
	if !started && code == cmdutil.ExitRuntime {
		code = cmdutil.ExitUsage // cobra's own errors: unknown command, bad args
	}
	var ee *cmdutil.ExitError
	if errors.As(err, &ee) && ee.Msg == "" {
		return code
	}
	fmt.Fprintf(io.ErrOut, "devctl: %s\n", OneLine(err.Error()))
	return code
}

// maxQuoted bounds a quoted value echoed in a message: a 1 MB --device
// must not become a 1 MB error line.
const maxQuoted = 80

// OneLine makes an error message the single, inert line devctl promises:
// line breaks become "; ", over-long quoted values are cut short, and
// whatever a user's value or a machine put into the message that could act
// on a terminal (escape sequences, bidirectional overrides) is shown as
// "?" (safetext.Clean).
func OneLine(msg string) string {
	msg = didYouMean(msg)
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	msg = strings.Join(lines, "; ")
	var b strings.Builder
	for i := 0; i < len(msg); {
		if msg[i] == '"' {
			if q, err := strconv.QuotedPrefix(msg[i:]); err == nil {
				i += len(q)
				if len(q) > maxQuoted+2 {
					v, _ := strconv.Unquote(q)
					n := len(v)
					if r := []rune(v); len(r) > maxQuoted {
						v = string(r[:maxQuoted]) + "..."
					}
					q = fmt.Sprintf("%q (%d bytes)", v, n)
				}
				b.WriteString(q)
				continue
			}
		}
		b.WriteByte(msg[i])
		i++
	}
	return safetext.Clean(b.String())
}

// ExitCode maps an error to devctl's documented exit codes.
func ExitCode(err error) int {
	var ee *cmdutil.ExitError
	var badState *state.BadDirError
	switch {
	case err == nil:
		return cmdutil.ExitOK
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, cmdutil.ErrUsage), errors.Is(err, config.ErrInvalid), errors.Is(err, output.ErrUnknownFormat),
		errors.Is(err, target.ErrRefused), // an output path the one policy refuses
		errors.As(err, &badState):         // a relative XDG_STATE_HOME is a bad environment variable
		return cmdutil.ExitUsage
	default:
		return cmdutil.ExitRuntime
	}
}
