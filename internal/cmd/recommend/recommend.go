// Package recommend is the `devctl recommend` command: will a model fit a
// device, in what precision, with what settings, and what to change when
// it will not.
package recommend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/hfhub"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/output"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/recommend"
	"github.com/devctl/devctl/internal/report"
	"github.com/devctl/devctl/internal/userfile"
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
	// History reads the per-device run history.
	History func() (history.Records, error)
	// ReadFile reads --model-config (tests inject one).
	ReadFile func(string) ([]byte, error)
	// LookupEnv reads the Hugging Face settings (HF_HOME, HF_TOKEN, ...).
	LookupEnv func(string) (string, bool)

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

	format output.Format // set by Complete
}

// NewOptions fills the dependencies recommend uses from the factory.
// `devctl run` builds its recommendation from these options too.
func NewOptions(f *cmdutil.Factory) *Options {
	return &Options{
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
		History:   func() (history.Records, error) { return history.LoadRecent(f.LookupEnv) }, // the rule's window
		ReadFile:  readModelConfig,
		LookupEnv: f.LookupEnv,
	}
}

// NewCmdRecommend builds `devctl recommend`. runF, when not nil, replaces
// the run step (tests stop after flag parsing).
func NewCmdRecommend(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := NewOptions(f)
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

// Complete parses -o and normalises the spelling of the choice flags.
func (o *Options) Complete() error {
	format, err := formats.Parse(o.Output)
	if err != nil {
		return err
	}
	o.format = format
	for _, p := range []*string{&o.Mode, &o.Optimizer, &o.Recompute, &o.Attention, &o.Convention, &o.Offload, &o.Strategy} {
		*p = strings.ToLower(strings.TrimSpace(*p))
	}
	return nil
}

// Validate checks the flags that need no I/O.
func (o *Options) Validate() error {
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
	res, err := Compute(ctx, o)
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

// Compute completes the options, validates and recommends, printing
// nothing. `devctl run` starts its command with the environment of this
// result, the same variables `recommend -o env` prints.
func Compute(ctx context.Context, o *Options) (*recommend.Result, error) {
	if err := o.Complete(); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o.Recommend(ctx)
}

// Recommend resolves the model and the device and recommends; the options
// are complete and valid.
func (o *Options) Recommend(ctx context.Context) (*recommend.Result, error) {
	model, source, err := o.loadModel(ctx)
	if err != nil {
		return nil, err
	}
	extra, err := o.strategyFlag()
	if err != nil {
		return nil, err
	}
	// The device catalogue is parsed only when --device names something:
	// the plain probe path stays as cheap as `devctl probe`.
	catDev, isCatalogue, err := o.catalogueDevice()
	if err != nil {
		return nil, err
	}
	if o.Device != "" && !isCatalogue {
		extra["device.preferred"] = config.Flag{Name: "--device", Value: strings.ToLower(o.Device)}
	}
	cfg, err := o.Config(extra)
	if err != nil {
		return nil, err
	}

	var target recommend.Target
	var fellBack string
	if isCatalogue {
		target = recommend.TargetFromCatalogue(catDev, o.Devices)
	} else if target, fellBack, err = o.probedTarget(ctx, cfg); err != nil {
		return nil, err
	}

	d := cfg.Device
	in := recommend.Input{
		Model: model, ModelSource: source, Mode: o.Mode, Precision: d.Precision, PrecisionSource: cfg.Sources["device.precision"].String(),
		BatchSize: o.BatchSize, SeqLen: o.SeqLen, Optimizer: o.Optimizer, Recompute: o.Recompute, Attention: o.Attention,
		Convention: o.Convention, Offload: o.Offload, OffloadParams: o.OffloadParams, ZeROStage: o.ZeROStage,
		Devices: o.Devices, Target: target, CPUFallback: d.FallbackEnabled,
	}
	in.SetStrategy(d.MemoryStrategy, d.MemoryFraction, cfg.Sources["device.memory_strategy"].String(), cfg.Sources["device.memory_fraction"].String())
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
	if !res.Device.Catalogue {
		recs, err := o.History()
		recommend.AddHistory(res, recs, err)
	}
	return res, nil
}

// strategyFlag turns --strategy into a device.memory_strategy flag layer:
// "auto" leaves the config alone and lets recommend choose by model size.
func (o *Options) strategyFlag() (map[string]config.Flag, error) {
	extra := map[string]config.Flag{}
	if o.Strategy == "auto" {
		return extra, nil
	}
	if prev, ok := o.GlobalConfigFlags["device.memory_strategy"]; ok && !strings.EqualFold(strings.TrimSpace(prev.Value), o.Strategy) {
		return nil, cmdutil.Usagef("--strategy %s conflicts with %s %s: give one of them", o.Strategy, prev.Name, prev.Value)
	}
	extra["device.memory_strategy"] = config.Flag{Name: "--strategy", Value: o.Strategy}
	return extra, nil
}

// catalogueDevice looks --device up in the device catalogue. A name that is
// neither catalogued nor a probed backend or id is a usage error.
func (o *Options) catalogueDevice() (recommend.CatalogDevice, bool, error) {
	if o.Device == "" {
		return recommend.CatalogDevice{}, false, nil
	}
	devices, err := recommend.LoadDevices(configs.DevicesYAML)
	if err != nil {
		return recommend.CatalogDevice{}, false, err
	}
	if d, ok := recommend.FindDevice(devices, o.Device); ok {
		return d, true, nil
	}
	if _, err := backend.ParsePreference(o.Device); err != nil {
		names := recommend.DeviceNames(devices)
		msg := fmt.Sprintf("invalid --device %q: want a probed backend or id (cuda, cuda:1, cpu, ...) or a catalogued device (%s)", o.Device, strings.Join(names, ", "))
		if s := recommend.Closest(o.Device, names); s != "" {
			msg = fmt.Sprintf("invalid --device %q: did you mean %q? (catalogued: %s; or a probed id such as cuda:1)", o.Device, s, strings.Join(names, ", "))
		}
		return recommend.CatalogDevice{}, false, cmdutil.Usagef("%s", msg)
	}
	return recommend.CatalogDevice{}, false, nil
}

// probedTarget probes the machine for the device to plan for, and says why
// it was chosen.
func (o *Options) probedTarget(ctx context.Context, cfg *config.Config) (recommend.Target, string, error) {
	rep, err := o.Probe(ctx, cfg)
	if err != nil {
		return recommend.Target{}, "", err
	}
	target, err := recommend.TargetFromProbe(rep)
	if err != nil {
		return recommend.Target{}, "", err
	}
	var fellBack string
	if rep.Selection != nil {
		fellBack = rep.Selection.Reason
		if !rep.Selection.FellBack {
			fellBack = "probed: " + fellBack
		}
	}
	if o.Devices > target.Count && target.Backend != "cpu" {
		return recommend.Target{}, "", cmdutil.Usagef("invalid --devices %d: this machine has %d %s device(s); plan for more with a catalogued device (--device a100-80gb --devices %d)", o.Devices, target.Count, target.Backend, o.Devices)
	}
	if o.Devices > 1 {
		target.Count = o.Devices
	}
	return target, fellBack, nil
}

// loadModel resolves --model-params, --model or --model-config.
func (o *Options) loadModel(ctx context.Context) (oomsim.Model, string, error) {
	switch {
	case o.ModelParams != "":
		n, err := recommend.ParseParams(o.ModelParams)
		if err != nil {
			return oomsim.Model{}, "", cmdutil.Usagef("invalid --model-params %q: %w", o.ModelParams, err)
		}
		return oomsim.Model{Name: recommend.FormatParams(n) + " parameters", Params: n}, "--model-params", nil
	case o.Model != "":
		models, err := recommend.LoadModels(configs.ModelsYAML)
		if err != nil {
			return oomsim.Model{}, "", err
		}
		m, err := recommend.FindModel(models, o.Model)
		if err == nil {
			return m.Model(), "catalogue", nil
		}
		if !strings.Contains(o.Model, "/") {
			return oomsim.Model{}, "", cmdutil.Usagef("%w (or a Hugging Face id such as Qwen/Qwen2-1.5B)", err)
		}
		// ORG/NAME: any Hugging Face model, never a catalogue guess.
		files, err := hfhub.Fetch(ctx, o.Model, o.hubOptions())
		if err != nil {
			return oomsim.Model{}, "", cmdutil.Usagef("--model %s: %w", o.Model, err)
		}
		return o.fromFiles(o.Model, "Hugging Face Hub ("+files.From+")", files.Config, files.Index, "--model "+o.Model)
	default:
		path, index := o.ModelConfig, []byte(nil)
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			// A model directory: its config.json, and its index if any.
			path = filepath.Join(o.ModelConfig, hfhub.ConfigFile)
			if ix, err := userfile.Read(filepath.Join(o.ModelConfig, hfhub.IndexFile), hfhub.DefaultMaxIndex); err == nil {
				index = ix
			}
		}
		data, err := o.ReadFile(path)
		if err != nil {
			return oomsim.Model{}, "", cmdutil.Usagef("--model-config %s: %w", path, err)
		}
		return o.fromFiles(o.ModelConfig, "config.json", data, index, "--model-config "+o.ModelConfig)
	}
}

// fromFiles sizes a model from config.json and its optional index.
func (o *Options) fromFiles(name, source string, config, index []byte, flag string) (oomsim.Model, string, error) {
	var total int64
	if index != nil {
		ix, err := hfhub.ParseIndex(index)
		if err != nil {
			return oomsim.Model{}, "", cmdutil.Usagef("%s: %w", flag, err)
		}
		total = *ix.Metadata.TotalSize
	}
	m, notes, err := recommend.ModelFromFiles(name, config, total)
	if err != nil {
		return oomsim.Model{}, "", cmdutil.Usagef("%s: %w", flag, err)
	}
	if m.Name == "" {
		m.Name = name
	}
	m.Notes = append(m.Notes, notes...)
	return m, source, nil
}

// hubOptions reads the Hugging Face settings from the environment, as
// huggingface_hub does: HF_HUB_CACHE, else HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub or ~/.cache/huggingface/hub; HF_TOKEN;
// HF_ENDPOINT; HF_HUB_OFFLINE. Downloads are kept under devctl's own cache
// directory, never in Hugging Face's.
func (o *Options) hubOptions() hfhub.Options {
	getenv := func(k string) string {
		if o.LookupEnv == nil {
			return ""
		}
		v, _ := o.LookupEnv(k)
		return v
	}
	cacheHome := getenv("XDG_CACHE_HOME")
	if cacheHome == "" {
		if home := getenv("HOME"); home != "" {
			cacheHome = filepath.Join(home, ".cache")
		}
	}
	var hubCaches []string
	switch {
	case getenv("HF_HUB_CACHE") != "":
		hubCaches = append(hubCaches, getenv("HF_HUB_CACHE"))
	case getenv("HF_HOME") != "":
		hubCaches = append(hubCaches, filepath.Join(getenv("HF_HOME"), "hub"))
	case cacheHome != "":
		hubCaches = append(hubCaches, filepath.Join(cacheHome, "huggingface", "hub"))
	}
	ho := hfhub.Options{HubCaches: hubCaches, Token: getenv("HF_TOKEN"), Endpoint: getenv("HF_ENDPOINT")}
	if cacheHome != "" {
		ho.Cache = filepath.Join(cacheHome, "devctl", "hf")
	}
	switch strings.ToLower(strings.TrimSpace(getenv("HF_HUB_OFFLINE"))) {
	case "1", "true", "yes", "on":
		ho.Offline = true
	}
	return ho
}

// maxModelConfigBytes bounds --model-config: a config.json is a few KB
// (with a big id2label, a few hundred), and a wrong path (a checkpoint,
// /dev/zero) must not be read whole.
const maxModelConfigBytes = 4 << 20

// readModelConfig reads --model-config, at most maxModelConfigBytes. Pipes
// are read as they come, so --model-config <(curl ...) works.
func readModelConfig(name string) ([]byte, error) {
	return userfile.ReadAs(name, maxModelConfigBytes, "a config.json")
}
