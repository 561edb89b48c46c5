package cmdutil

import "context"

// Steps are a command's three steps (kubectl's Complete/Validate/Run):
// Complete fills in what the flags leave open (parses -o, reads the
// environment the command starts from), Validate checks it without I/O,
// Run acts.
type Steps interface {
	Complete() error
	Validate() error
	Run(ctx context.Context) error
}

// RunSteps runs the steps in order, stopping at the first error.
func RunSteps(ctx context.Context, s Steps) error {
	if err := s.Complete(); err != nil {
		return err
	}
	if err := s.Validate(); err != nil {
		return err
	}
	return s.Run(ctx)
}

// Execute is every command's RunE: the steps, or runF instead of them when
// a test gives one (it stops after flag parsing to inspect the options).
func Execute[O Steps](ctx context.Context, o O, runF func(O) error) error {
	if runF != nil {
		return runF(o)
	}
	return RunSteps(ctx, o)
}
