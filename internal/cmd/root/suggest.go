package root

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// didYouMean turns cobra's suggestion block for an unknown top-level
// command ("...\n\nDid you mean this?\n\tprobe\n") into one clause of the
// one-line error: `unknown command "prob" for "devctl": did you mean
// "probe"?`. Joined line by line it read "Did you mean this?; probe".
func didYouMean(msg string) string {
	head, list, ok := strings.Cut(msg, "\n\nDid you mean this?\n")
	if !ok {
		return msg
	}
	return head + suggestion(strings.Fields(list))
}

// suggestion is ": did you mean "a" or "b"?", or "" for no names.
func suggestion(names []string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return ": did you mean " + strings.Join(q, " or ") + "?"
}

// suggestSubcommands gives the commands below the root that have
// subcommands (config, doctor, history) the suggestion cobra gives only
// for top-level commands: `devctl doctor lsit` is an unknown command
// "lsit" for "devctl doctor": did you mean "list"?. Only the error's text
// changes: whatever a command's Args accepted, it still accepts.
func suggestSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		suggestSubcommands(sub)
	}
	if !c.HasParent() || !c.HasSubCommands() || c.Name() == "help" || c.Name() == "completion" || c.Args == nil {
		return
	}
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's default for the root
	}
	args := c.Args
	c.Args = func(cmd *cobra.Command, a []string) error {
		err := args(cmd, a)
		if err == nil || len(a) == 0 {
			return err
		}
		if s := cmd.SuggestionsFor(a[0]); len(s) > 0 {
			return fmt.Errorf("unknown command %q for %q%s", a[0], cmd.CommandPath(), suggestion(s))
		}
		return err
	}
}
