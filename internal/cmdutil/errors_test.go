package cmdutil

import (
	"errors"
	"io/fs"
	"testing"
)

func TestUsagefWrapsItsCause(t *testing.T) {
	err := Usagef("--model-config %s: %w", "x.json", fs.ErrNotExist)
	if !errors.Is(err, ErrUsage) {
		t.Errorf("%v is not a usage error", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%v does not wrap its cause", err)
	}
	if got, want := err.Error(), "--model-config x.json: file does not exist"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
}
