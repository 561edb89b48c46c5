package target

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteJSONScrubsEveryString: the run report's command field was not
// scrubbed (issue 22). Every string of a document written through
// WriteJSON passes the one scrubber; the document stays valid, indented
// JSON, and a string without a secret is kept as it was (U+202E escaped).
func TestWriteJSONScrubsEveryString(t *testing.T) {
	type attempt struct {
		Device string `json:"device"`
	}
	doc := struct {
		Command  string    `json:"command"`
		Stopped  string    `json:"stopped"`
		Attempts []attempt `json:"attempts"`
		Name     string    `json:"name"`
	}{
		Command:  "glrt-t3_xZ8kLp2QvN7mRt4YwB9s",
		Stopped:  "Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
		Attempts: []attempt{{Device: "cuda"}},
		Name:     "A100\u202e",
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := RunReport.WriteJSON(path, doc); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"glrt-", "QWxhZGRpbjpvcGVuIHNlc2FtZQ", "\u202e"} {
		if strings.Contains(string(b), s) {
			t.Errorf("%q written:\n%s", s, b)
		}
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil || back["command"] != "[withheld]" || back["name"] != "A100\u202e" {
		t.Errorf("decoded %v, %v", back, err)
	}
	if !strings.Contains(string(b), "\n  \"attempts\": [") {
		t.Errorf("not indented as the exporter indents:\n%s", b)
	}
}
