package root

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/bench"
	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/output"
	"github.com/devctl/devctl/internal/probe/drivers"
	"github.com/devctl/devctl/internal/recommend"
)

// completions are the values each flag name takes, wherever it appears;
// a function so that catalogues are read only when a shell asks.
var completions = map[string]func(cmd *cobra.Command) []string{
	"model":           func(*cobra.Command) []string { return catalogueModels() },
	"device":          deviceValues,
	"check":           func(*cobra.Command) []string { return checkIDs() },
	"suite":           func(*cobra.Command) []string { return bench.AllSuites },
	"only":            func(*cobra.Command) []string { return drivers.Names() },
	"lang":            fixed("en", "pl"),
	"mode":            fixed("inference", "training", "lora", "qlora"),
	"precision":       fixed("auto", "fp32", "fp16", "bf16", "8bit", "4bit"),
	"memory-strategy": fixed("conservative", "balanced", "aggressive", "custom"),
	"strategy":        fixed("auto", "conservative", "balanced", "aggressive", "custom"),
	"fallback":        fixed("true", "false"),
	"fail-on":         fixed("warn", "fail"),
	"optimizer":       fixed("adamw", "adamw-8bit", "sgd", "adafactor"),
	"recompute":       fixed("none", "selective", "full"),
	"convention":      fixed("eleutherai", "accelerate", "deepspeed"),
	"offload":         fixed("none", "cpu"),
}

// listFlags take comma-separated values: completion extends the last one.
var listFlags = map[string]bool{"check": true, "suite": true, "only": true}

func fixed(vals ...string) func(*cobra.Command) []string {
	return func(*cobra.Command) []string { return vals }
}

// registerCompletions gives every flag of the tree that takes one of a
// known set of values (models, catalogue devices, check ids, suites,
// drivers, output formats, ...) a completion function.
func registerCompletions(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		values := completions[f.Name]
		if formats, ok := f.Annotations[output.FormatsAnnotation]; ok && f.Name == "output" {
			values = fixed(formats...)
		}
		if values == nil {
			return
		}
		list := listFlags[f.Name]
		_ = c.RegisterFlagCompletionFunc(f.Name, func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			vals := values(cmd)
			if !list {
				return vals, cobra.ShellCompDirectiveNoFileComp
			}
			done, last := "", toComplete
			if i := strings.LastIndex(toComplete, ","); i >= 0 {
				done, last = toComplete[:i+1], toComplete[i+1:]
			}
			var out []string
			for _, v := range vals {
				if strings.HasPrefix(v, last) && !strings.Contains(","+done, ","+v+",") {
					out = append(out, done+v)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		})
	})
	for _, sub := range c.Commands() {
		registerCompletions(sub)
	}
}

// deviceValues: recommend and run plan for catalogued devices too; the
// other commands take a backend.
func deviceValues(cmd *cobra.Command) []string {
	vals := []string{backend.Auto}
	for _, b := range backend.All() {
		vals = append(vals, string(b))
	}
	if n := cmd.Name(); n == "recommend" || n == "run" {
		vals = append(vals, recommend.DeviceNames(recommend.Devices())...)
	}
	return vals
}

func catalogueModels() []string {
	ms, err := recommend.LoadModels(configs.ModelsYAML)
	if err != nil {
		return nil
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return names
}

func checkIDs() []string {
	var ids []string
	for _, c := range doctor.All() {
		ids = append(ids, c.ID)
	}
	return ids
}
