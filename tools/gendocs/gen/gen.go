// Package gen writes the command reference of a cobra tree with
// spf13/cobra/doc: markdown for the repository, man pages for releases.
package gen

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Write generates markdown into mdDir and man pages into manDir (either
// may be empty to skip it). Pages carry no generation date except the man
// header's, which is date.
func Write(cmd *cobra.Command, mdDir, manDir string, date time.Time) error {
	cmd.InitDefaultCompletionCmd()
	cmd.InitDefaultHelpCmd()
	disableAutoGenTag(cmd)
	if mdDir != "" {
		if err := os.MkdirAll(mdDir, 0o755); err != nil {
			return err
		}
		if err := doc.GenMarkdownTree(cmd, mdDir); err != nil {
			return fmt.Errorf("markdown: %w", err)
		}
	}
	if manDir != "" {
		if err := os.MkdirAll(manDir, 0o755); err != nil {
			return err
		}
		header := &doc.GenManHeader{Title: "DEVCTL", Section: "1", Source: "devctl", Manual: "devctl manual", Date: &date}
		if err := doc.GenManTree(cmd, header, manDir); err != nil {
			return fmt.Errorf("man pages: %w", err)
		}
	}
	return nil
}

func disableAutoGenTag(c *cobra.Command) {
	c.DisableAutoGenTag = true
	for _, sub := range c.Commands() {
		disableAutoGenTag(sub)
	}
}
