// Package recommend is the `devctl recommend` command: will a model fit a
// device, in what precision, with what settings, and what to change when
// it will not.
package recommend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/devctl/devctl/internal/backend"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/recommend"
	"github.com/devctl/devctl/internal/report"
	"github.com/devctl/devctl/internal/userfile"
)

// Options are the recommend command's flags and dependencies.
type Options struct {
	Factory *cmdutil.Factory

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

	// ReadFile reads --model-config (tests inject one).
	ReadFile func(string) ([]byte, error)
}

// NewCmdRecommend builds `devctl recommend`. runF, when not nil, replaces
// the run step (tests stop after flag parsing).
func NewCmdRecommend(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f, ReadFile: readModelConfig}
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
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.ModelParams, "model-params", "", "model size: 150M, 7B, 1.3e9, 350k, 6738415616 (K/M/B/T, decimal)")
	fl.StringVar(&opts.Model, "model", "", "a catalogued model: gpt2, bert-base-uncased, llama-2-7b, mistral-7b, ... (see configs/models.yaml)")
	fl.StringVar(&opts.ModelConfig, "model-config", "", "a Hugging Face config.json (llama, mistral, qwen2, gpt2, bert, t5)")
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
	fl.StringVarP(&opts.Output, "output", "o", "", "output format: table, json or env")
	return cmd
}

// validate checks the flags that need no I/O.
func validate(o *Options) error {
	n := 0
	for _, s := range []string{o.ModelParams, o.Model, o.ModelConfig} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return cmdutil.Usagef("give exactly one of --model-params, --model or --model-config")
	}
	checks := []struct {
		flag, v string
		ok      []string
	}{
		{"--mode", o.Mode, oomsim.Modes},
		{"--optimizer", o.Optimizer, oomsim.Optimizers},
		{"--recompute", o.Recompute, oomsim.Recomputes},
		{"--attention", o.Attention, oomsim.Attentions},
		{"--convention", o.Convention, oomsim.Conventions},
		{"--offload", o.Offload, oomsim.Offloads},
		{"--strategy", o.Strategy, append([]string{"auto"}, config.Strategies...)},
	}
	for _, c := range checks {
		if !slices.Contains(c.ok, strings.ToLower(c.v)) {
			return cmdutil.Usagef("invalid %s %q: want one of %s", c.flag, c.v, strings.Join(c.ok, ", "))
		}
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
	if o.OffloadParams && (o.Offload != "cpu" || o.ZeROStage != 3) {
		return cmdutil.Usagef("--offload-params needs --offload cpu and --zero-stage 3")
	}
	return nil
}

// Run completes the options, validates, recommends and prints.
func Run(ctx context.Context, o *Options) error {
	f := o.Factory
	format, err := report.ParseFormat(o.Output, report.Table, report.Table, report.JSON, report.Env)
	if err != nil {
		return err
	}
	res, err := Compute(ctx, o)
	if err != nil {
		return err
	}
	var werr error
	switch format {
	case report.JSON:
		werr = report.WriteJSON(f.IO.Out, res)
	case report.Env:
		werr = report.RecommendEnv(f.IO.Out, res)
		// The exports go to eval; whether they describe a plan that runs
		// must not be lost, so it goes to stderr.
		if !res.Fits {
			fmt.Fprintln(f.IO.ErrOut, recommend.EnvWarning(res))
		}
	default:
		werr = report.RecommendTable(f.IO.Out, res, report.NewStyle(f.IO.Out, f.IO.ColorEnabled()))
	}
	if werr != nil {
		return werr
	}
	if o.RequireFit && !res.Fits {
		return &cmdutil.ExitError{Code: cmdutil.ExitFound}
	}
	return nil
}

// Compute completes the options, validates and recommends, printing
// nothing. `devctl run` starts its command with the environment of this
// result, the same variables `recommend -o env` prints.
func Compute(ctx context.Context, o *Options) (*recommend.Result, error) {
	f := o.Factory
	for _, p := range []*string{&o.Mode, &o.Optimizer, &o.Recompute, &o.Attention, &o.Convention, &o.Offload, &o.Strategy} {
		*p = strings.ToLower(strings.TrimSpace(*p))
	}
	if err := validate(o); err != nil {
		return nil, err
	}
	model, source, err := o.loadModel()
	if err != nil {
		return nil, err
	}

	// --strategy feeds device.memory_strategy like a config flag; "auto"
	// leaves the config alone and lets recommend choose by model size.
	if prev, ok := f.Global.ConfigFlags["device.memory_strategy"]; ok && o.Strategy != "auto" && !strings.EqualFold(strings.TrimSpace(prev.Value), o.Strategy) {
		return nil, cmdutil.Usagef("--strategy %s conflicts with %s %s: give one of them", o.Strategy, prev.Name, prev.Value)
	}
	if o.Strategy != "auto" {
		f.Global.ConfigFlags["device.memory_strategy"] = config.Flag{Name: "--strategy", Value: o.Strategy}
	}
	// The device catalogue is parsed only when --device names something:
	// the plain probe path stays as cheap as `devctl probe`.
	var catDev recommend.CatalogDevice
	isCatalogue := false
	if o.Device != "" {
		devices, err := recommend.LoadDevices(configs.DevicesYAML)
		if err != nil {
			return nil, err
		}
		catDev, isCatalogue = recommend.FindDevice(devices, o.Device)
		if !isCatalogue {
			if _, err := backend.ParsePreference(o.Device); err != nil {
				names := recommend.DeviceNames(devices)
				msg := fmt.Sprintf("invalid --device %q: want a probed backend or id (cuda, cuda:1, cpu, ...) or a catalogued device (%s)", o.Device, strings.Join(names, ", "))
				if s := recommend.Closest(o.Device, names); s != "" {
					msg = fmt.Sprintf("invalid --device %q: did you mean %q? (catalogued: %s; or a probed id such as cuda:1)", o.Device, s, strings.Join(names, ", "))
				}
				return nil, cmdutil.Usagef("%s", msg)
			}
			f.Global.ConfigFlags["device.preferred"] = config.Flag{Name: "--device", Value: strings.ToLower(o.Device)}
		}
	}
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	d := cfg.Device

	var target recommend.Target
	var fellBack string
	if isCatalogue {
		target = recommend.TargetFromCatalogue(catDev, o.Devices)
	} else {
		rep, _, err := cmdutil.RunProbe(ctx, f, nil)
		if err != nil {
			return nil, err
		}
		target, err = recommend.TargetFromProbe(rep)
		if err != nil {
			return nil, err
		}
		if rep.Selection != nil {
			fellBack = rep.Selection.Reason
			if !rep.Selection.FellBack {
				fellBack = "probed: " + fellBack
			}
		}
		if o.Devices > target.Count && target.Backend != "cpu" {
			return nil, cmdutil.Usagef("invalid --devices %d: this machine has %d %s device(s); plan for more with a catalogued device (--device a100-80gb --devices %d)", o.Devices, target.Count, target.Backend, o.Devices)
		}
		if o.Devices > 1 {
			target.Count = o.Devices
		}
	}

	in := recommend.Input{
		Model: model, ModelSource: source, Mode: o.Mode, Precision: d.Precision, PrecisionSource: cfg.Sources["device.precision"].String(),
		BatchSize: o.BatchSize, SeqLen: o.SeqLen, Optimizer: o.Optimizer, Recompute: o.Recompute, Attention: o.Attention,
		Convention: o.Convention, Offload: o.Offload, OffloadParams: o.OffloadParams, ZeROStage: o.ZeROStage,
		Devices: o.Devices, Target: target, CPUFallback: d.FallbackEnabled,
		Strategy: "auto",
	}
	if cfg.Sources["device.memory_strategy"] != config.Default || cfg.Sources["device.memory_fraction"] != config.Default || d.MemoryStrategy == "custom" {
		in.Strategy, in.Fraction = d.MemoryStrategy, d.MemoryFraction
		in.StrategySource = cfg.Sources["device.memory_strategy"].String()
		if d.MemoryStrategy == "custom" && cfg.Sources["device.memory_fraction"] != config.Default {
			in.StrategySource = cfg.Sources["device.memory_fraction"].String()
		}
	}
	res, err := recommend.Recommend(in)
	if err != nil {
		if errors.Is(err, recommend.ErrContradiction) {
			return nil, cmdutil.Usagef("%s", strings.TrimPrefix(err.Error(), recommend.ErrContradiction.Error()+": "))
		}
		return nil, err
	}
	if fellBack != "" {
		res.Reasons = append([]recommend.Reason{{Decision: "device", Choice: target.Name, Why: fellBack}}, res.Reasons...)
	}
	addHistory(f, res)
	return res, nil
}

// loadModel resolves --model-params, --model or --model-config.
func (o *Options) loadModel() (oomsim.Model, string, error) {
	switch {
	case o.ModelParams != "":
		n, err := recommend.ParseParams(o.ModelParams)
		if err != nil {
			return oomsim.Model{}, "", cmdutil.Usagef("invalid --model-params %q: %v", o.ModelParams, err)
		}
		return oomsim.Model{Name: recommend.FormatParams(n) + " parameters", Params: n}, "--model-params", nil
	case o.Model != "":
		models, err := recommend.LoadModels(configs.ModelsYAML)
		if err != nil {
			return oomsim.Model{}, "", err
		}
		m, err := recommend.FindModel(models, o.Model)
		if err != nil {
			return oomsim.Model{}, "", cmdutil.Usagef("%v", err)
		}
		return m.Model(), "catalogue", nil
	default:
		data, err := o.ReadFile(o.ModelConfig)
		if err != nil {
			return oomsim.Model{}, "", cmdutil.Usagef("--model-config %s: %v", o.ModelConfig, err)
		}
		m, err := recommend.ParseHFConfig(data)
		if err != nil {
			return oomsim.Model{}, "", cmdutil.Usagef("--model-config %s: %v", o.ModelConfig, err)
		}
		if m.Name == "" {
			m.Name = o.ModelConfig
		}
		return m, "config.json", nil
	}
}

// maxModelConfigBytes bounds --model-config: a config.json is a few KB
// (with a big id2label, a few hundred), and a wrong path (a checkpoint,
// /dev/zero) must not be read whole.
const maxModelConfigBytes = 4 << 20

// readModelConfig reads --model-config, at most maxModelConfigBytes. Pipes
// are read as they come, so --model-config <(curl ...) works.
func readModelConfig(name string) ([]byte, error) {
	data, err := userfile.Read(name, maxModelConfigBytes)
	if _, big := err.(*userfile.TooLargeError); big {
		return nil, fmt.Errorf("%w: not a config.json", err)
	}
	return data, err
}
