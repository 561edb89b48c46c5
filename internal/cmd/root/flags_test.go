package root

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmd/factory"
	"github.com/devctl/devctl/internal/iostreams"
)

// The settings flags sit only on the commands that honour them: history,
// schema, bench, snapshot and the rest do not offer --precision.
func TestSettingsFlagsOnlyWhereTheyMatter(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	root := NewCmdRoot(factory.New(io, func(string) (string, bool) { return "", false }, "dev"))
	got := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var names []string
		for n := range settingFlags {
			if c.Flags().Lookup(n) != nil {
				names = append(names, n)
			}
		}
		if c.Flags().Lookup("device") != nil && c.Flags().Lookup("device").Annotations[configKeyAnnotation] != nil {
			names = append(names, "device")
		}
		sort.Strings(names)
		if len(names) > 0 {
			got[strings.TrimPrefix(c.CommandPath(), "devctl ")] = strings.Join(names, " ")
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	want := map[string]string{
		"probe":       "device fallback memory-fraction memory-strategy",
		"recommend":   "fallback memory-fraction memory-strategy precision",
		"doctor":      "device fallback precision",
		"run":         "device fallback memory-fraction memory-strategy precision",
		"config show": "fallback memory-fraction memory-strategy precision",
		"serve":       "fallback memory-fraction memory-strategy",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settings flags per command (-want +got)\n%s", diff)
	}
	if root.PersistentFlags().Lookup("precision") != nil {
		t.Error("--precision is still a global flag")
	}
}
