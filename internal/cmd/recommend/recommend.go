// Package recommend is the `devctl recommend` command: will a model fit a
// device, in what precision, with what settings, and what to change when
// it will not.
package recommend

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/output"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/recommend"
	"github.com/devctl/devctl/internal/report"
)

// formats are what -o offers.
var formats = output.Spec{output.Table, output.JSON, output.YAML, output.Env}

// Options are the recommend command's flags and the dependencies it uses.
type Options struct {
	IO *iostreams.IOStreams
	// Config loads the configuration with the command's own flag layer
	// (--strategy, --device) on top of the global flags.
	Config func(extra map[string]config.Flag) (*config.Config, error)
	// GlobalConfigFlags are the config keys global flags set, to catch a
	// --strategy that contradicts --memory-strategy.
	GlobalConfigFlags map[string]config.Flag
	// Probe runs the probe under cfg.
	Probe func(ctx context.Context, cfg *config.Config) (*probe.Report, error)
	// Deps are the planner's other dependencies (history, files, the Hub).
	Deps recommend.Deps

	ModelParams string
	Model       string
	ModelConfig string

	Mode       string
	BatchSize  int
	SeqLen     int
	Optimizer  string
	Recompute  string
	Attention  string
	Strategy   string
	Devices    int
	Convention string
	Offload    string
	// OffloadParams also moves parameters to the host (ZeRO-3).
	OffloadParams bool
	ZeROStage     int
	Device        string
	Output        string
	// RequireFit makes a plan that does not fit exit 3 (scripts and CI).
	RequireFit bool

	format output.Format         // set by Complete
	run    recommend.RunSettings // set by Validate
	strat  oomsim.Strategy       // --strategy, set by Validate ("" for auto)
}

// NewCmdRecommend builds `devctl recommend`. runF, when not nil, replaces
// the run step (tests stop after flag parsing).
func NewCmdRecommend(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{
		IO:                f.IO,
		Config:            f.ConfigWith,
		GlobalConfigFlags: f.Global.ConfigFlags,
		Probe: func(ctx context.Context, cfg *config.Config) (*probe.Report, error) {
			h, err := f.Host()
			if err != nil {
				return nil, err
			}
			rep, _, err := cmdutil.RunProbeOn(ctx, f, h, cfg, nil)
			return rep, err
		},
		Deps: cmdutil.PlanDeps(f),
	}
	cmd := &cobra.Command{
		Use:   "recommend",
		Short: "Say whether a model fits a device, in what precision and with what settings",
		Long: `Recommend estimates the memory a model needs on a device (weights, gradients,
optimizer state, activations, KV cache, runtime overhead), picks a memory
strategy and a precision with reasons, prints the environment variables to
set, and, when the plan does not fit, runs the fallback ladder to find the
cheapest change that does.

The device is the probed default (or --device cuda:1), or a catalogued one for
planning without the hardware (--device a100-80gb); a catalogued device does
not run the probe.`,
		Example: `  devctl recommend --model-params 150M
  devctl recommend --model llama-2-7b --mode training --device a100-80gb
  devctl recommend --model-config ./config.json --mode inference --seq-len 4096 -o json
  eval "$(devctl recommend --model mistral-7b --device l4 -o env)"
  devctl recommend --model t5-3b --mode training --convention deepspeed --devices 8 --offload cpu`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Execute(cmd.Context(), opts, runF)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.ModelParams, "model-params", "", "model size: 150M, 7B, 1.3e9, 350k, 6738415616 (K/M/B/T, decimal)")
	fl.StringVar(&opts.Model, "model", "", "a catalogued model (gpt2, llama-2-7b, ...; configs/models.yaml) or any Hugging Face model as ORG/NAME: config.json and the safetensors index from the local HF cache, else downloaded (HF_TOKEN, HF_ENDPOINT, HF_HUB_OFFLINE; never weights)")
	fl.StringVar(&opts.ModelConfig, "model-config", "", "a Hugging Face config.json, or a model directory holding one (and its model.safetensors.index.json)")
	fl.StringVar(&opts.Mode, "mode", "inference", "inference, training, lora or qlora")
	fl.IntVar(&opts.BatchSize, "batch-size", 1, "batch per device step (kept when the ladder shrinks the micro-batch)")
	fl.IntVar(&opts.SeqLen, "seq-len", 0, "tokens per sequence (default 2048, or the model's maximum if shorter)")
	fl.StringVar(&opts.Optimizer, "optimizer", "adamw", "adamw, adamw-8bit, sgd or adafactor")
	fl.StringVar(&opts.Recompute, "recompute", "none", "activation recomputation: none, selective or full")
	fl.StringVar(&opts.Attention, "attention", "auto", "attention implementation: auto (eager-like for training, SDPA for inference), eager or sdpa (also flash attention)")
	fl.BoolVar(&opts.RequireFit, "require-fit", false, "exit 3 when the plan as given does not fit (the output still shows what would)")
	// --strategy did what the global --memory-strategy does; it stays as a
	// hidden alias so that old scripts keep working, and one flag is shown.
	fl.StringVar(&opts.Strategy, "strategy", "auto", "alias of the global --memory-strategy")
	_ = fl.MarkHidden("strategy")
	fl.IntVar(&opts.Devices, "devices", 1, "devices to use (data parallel, or sharded with --zero-stage / the ladder)")
	fl.StringVar(&opts.Convention, "convention", "eleutherai", "memory accounting: eleutherai, accelerate or deepspeed")
	fl.StringVar(&opts.Offload, "offload", "none", "offload optimizer states: none or cpu")
	fl.BoolVar(&opts.OffloadParams, "offload-params", false, "with --offload cpu and ZeRO-3, offload parameters too")
	fl.IntVar(&opts.ZeROStage, "zero-stage", 0, "ZeRO stage for --convention deepspeed or --devices N: 2 or 3 (0: none, ZeRO-2 for deepspeed)")
	fl.StringVar(&opts.Device, "device", "", "a probed device (cuda:1, cuda, cpu) or a catalogued one (t4, a100-80gb, h100-80gb, tpu-v5e, mi300x, apple-m2-max-32gb, ...)")
	formats.Register(fl, &opts.Output, "")
	return cmd
}

// Run completes, validates, plans and prints.
func Run(ctx context.Context, o *Options) error { return cmdutil.RunSteps(ctx, o) }

// Complete parses -o.
func (o *Options) Complete() (err error) {
	o.format, err = formats.Parse(o.Output)
	return err
}

// Validate checks the flags that need no I/O and reads the choice flags
// into the planner's words.
func (o *Options) Validate() error {
	if (recommend.ModelSpec{Params: o.ModelParams, Name: o.Model, Config: o.ModelConfig}).Given() != 1 {
		return cmdutil.Usagef("give exactly one of --model-params, --model or --model-config")
	}
	r := &o.run
	var ok [7]bool
	r.Mode, ok[0] = oomsim.Parse(o.Mode, oomsim.Modes)
	r.Optimizer, ok[1] = oomsim.Parse(o.Optimizer, oomsim.Optimizers)
	r.Recompute, ok[2] = oomsim.Parse(o.Recompute, oomsim.Recomputes)
	r.Attention, ok[3] = oomsim.Parse(o.Attention, oomsim.Attentions)
	r.Convention, ok[4] = oomsim.Parse(o.Convention, oomsim.Conventions)
	r.Offload, ok[5] = oomsim.Parse(o.Offload, oomsim.Offloads)
	o.strat, ok[6] = oomsim.Parse(o.Strategy, append([]oomsim.Strategy{"auto"}, config.Strategies...))
	for i, c := range []struct{ flag, v, want string }{
		{"--mode", o.Mode, oomsim.List(oomsim.Modes)},
		{"--optimizer", o.Optimizer, oomsim.List(oomsim.Optimizers)},
		{"--recompute", o.Recompute, oomsim.List(oomsim.Recomputes)},
		{"--attention", o.Attention, oomsim.List(oomsim.Attentions)},
		{"--convention", o.Convention, oomsim.List(oomsim.Conventions)},
		{"--offload", o.Offload, oomsim.List(oomsim.Offloads)},
		{"--strategy", o.Strategy, "auto, " + oomsim.List(config.Strategies)},
	} {
		if !ok[i] {
			return cmdutil.Usagef("invalid %s %q: want one of %s", c.flag, c.v, c.want)
		}
	}
	if o.strat == "auto" {
		o.strat = ""
	}
	if o.BatchSize < 1 || o.BatchSize > 1<<20 {
		return cmdutil.Usagef("invalid --batch-size %d: want 1 to %d", o.BatchSize, 1<<20)
	}
	if o.SeqLen < 0 || o.SeqLen > 1<<24 {
		return cmdutil.Usagef("invalid --seq-len %d: want 1 to %d", o.SeqLen, 1<<24)
	}
	if o.Devices < 1 || o.Devices > 1<<16 {
		return cmdutil.Usagef("invalid --devices %d: want 1 to %d", o.Devices, 1<<16)
	}
	if o.ZeROStage != 0 && o.ZeROStage != 2 && o.ZeROStage != 3 {
		return cmdutil.Usagef("invalid --zero-stage %d: want 2 or 3", o.ZeROStage)
	}
	if o.OffloadParams && (r.Offload != oomsim.OffloadCPU || o.ZeROStage != 3) {
		return cmdutil.Usagef("--offload-params needs --offload cpu and --zero-stage 3")
	}
	r.BatchSize, r.SeqLen, r.Devices, r.ZeROStage, r.OffloadParams = o.BatchSize, o.SeqLen, o.Devices, o.ZeROStage, o.OffloadParams
	return nil
}

// Run plans and prints.
func (o *Options) Run(ctx context.Context) error {
	res, err := o.plan(ctx)
	if err != nil {
		return err
	}
	var werr error
	switch o.format {
	case output.JSON, output.YAML:
		_, werr = output.Export(o.IO.Out, o.format, res)
	case output.Env:
		werr = Env(o.IO.Out, res)
		// The exports go to eval; whether they describe a plan that runs
		// must not be lost, so it goes to stderr.
		if !res.Fits {
			fmt.Fprintln(o.IO.ErrOut, recommend.EnvWarning(res))
		}
	default:
		werr = Table(o.IO.Out, res, report.NewStyle(o.IO.Out, o.IO.ColorEnabled()))
	}
	if werr != nil {
		return werr
	}
	if o.RequireFit && !res.Fits {
		return &cmdutil.ExitError{Code: cmdutil.ExitFound}
	}
	return nil
}

// plan builds the request from the flags and the configuration and asks
// the planner. A catalogued --device plans without probing; any other
// --device is the probe's device preference.
func (o *Options) plan(ctx context.Context) (*recommend.Result, error) {
	extra, err := o.strategyFlag()
	if err != nil {
		return nil, err
	}
	// The device catalogue is parsed only when --device names something:
	// the plain probe path stays as cheap as `devctl probe`.
	_, isCatalogue, err := recommend.CatalogueDevice(o.Device)
	if err != nil {
		return nil, usage(err)
	}
	req := recommend.Request{Model: recommend.ModelSpec{Params: o.ModelParams, Name: o.Model, Config: o.ModelConfig}, Run: o.run}
	if isCatalogue {
		req.Device = o.Device
	} else if o.Device != "" {
		extra["device.preferred"] = config.Flag{Name: "--device", Value: strings.ToLower(o.Device)}
	}
	cfg, err := o.Config(extra)
	if err != nil {
		return nil, err
	}
	req.Settings = cmdutil.PlanSettings(cfg)
	deps := o.Deps
	deps.Probe = func(ctx context.Context) (*probe.Report, error) { return o.Probe(ctx, cfg) }
	res, err := recommend.Plan(ctx, req, deps)
	return res, usage(err)
}

// usage turns the planner's bad-input errors into usage errors (exit 2).
func usage(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, recommend.ErrContradiction):
		return cmdutil.Usagef("%s", strings.TrimPrefix(err.Error(), recommend.ErrContradiction.Error()+": "))
	case errors.Is(err, recommend.ErrInput):
		return cmdutil.Usagef("%w", err)
	}
	return err
}

// strategyFlag turns --strategy into a device.memory_strategy flag layer:
// "auto" leaves the config alone and lets recommend choose by model size.
func (o *Options) strategyFlag() (map[string]config.Flag, error) {
	extra := map[string]config.Flag{}
	if o.strat == "" {
		return extra, nil
	}
	if prev, ok := o.GlobalConfigFlags["device.memory_strategy"]; ok && !strings.EqualFold(strings.TrimSpace(prev.Value), string(o.strat)) {
		return nil, cmdutil.Usagef("--strategy %s conflicts with %s %s: give one of them", o.strat, prev.Name, prev.Value)
	}
	extra["device.memory_strategy"] = config.Flag{Name: "--strategy", Value: string(o.strat)}
	return extra, nil
}
