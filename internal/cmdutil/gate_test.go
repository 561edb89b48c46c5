package cmdutil

import (
	"bytes"
	"testing"

	"github.com/devctl/devctl/internal/safetext"
)

// TestUnmetRequirementLinesAreInert: the reasons of an unmet requirement
// quote the report, which quotes the machine (a device id, a GPU name);
// the line is cleaned like every echo.
func TestUnmetRequirementLinesAreInert(t *testing.T) {
	type device struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	rep := struct {
		Devices []device `json:"devices"`
	}{Devices: []device{{ID: "cuda:0\u202e\x1b]0;x\x07", Name: "NVIDIA A100\x1b[2J"}}}
	var errOut bytes.Buffer
	err := Gate(&errOut, []string{"devices.name==H100"}, rep)
	if err == nil || errOut.Len() == 0 {
		t.Fatalf("err %v, stderr %q: want an unmet requirement", err, errOut.String())
	}
	for _, r := range errOut.String() {
		if r != '\n' && safetext.Unsafe(r) {
			t.Fatalf("stderr keeps %U raw: %q", r, errOut.String())
		}
	}
}
