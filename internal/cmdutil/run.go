package cmdutil

import "context"

// Steps are a command's three steps (kubectl's Complete/Validate/Run):
// fill in what the flags leave open, check it without I/O, then act.
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
