//go:build linux

package history_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/devctl/devctl/internal/cmd/root"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/iostreams"
)

// The test binary is devctl when DEVCTL_HISTORY_TEST_MAIN=1.
func TestMain(m *testing.M) {
	if os.Getenv("DEVCTL_HISTORY_TEST_MAIN") == "1" {
		os.Exit(root.Main(os.Args[1:], iostreams.System(), os.LookupEnv))
	}
	os.Exit(m.Run())
}

// `devctl history clear` on a real pseudo-terminal asks, and clears only
// on "y".
func TestClearAsksOnARealTerminal(t *testing.T) {
	for _, answer := range []string{"n", "y"} {
		t.Run(answer, func(t *testing.T) {
			state := t.TempDir()
			p := filepath.Join(state, "devctl", history.FileName)
			if err := history.AppendFile(p, history.Record{Device: "cpu", Outcome: history.Success}); err != nil {
				t.Fatal(err)
			}
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe, "history", "clear")
			cmd.Env = append(os.Environ(), "DEVCTL_HISTORY_TEST_MAIN=1", "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+state)
			master, err := pty.Start(cmd)
			if err != nil {
				t.Skipf("no pseudo-terminal: %v", err)
			}
			defer master.Close()
			r := bufio.NewReader(master)
			prompt := make([]byte, 0, 256)
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(string(prompt), "[y/N] ") && time.Now().Before(deadline) {
				b, err := r.ReadByte()
				if err != nil {
					t.Fatalf("reading the prompt: %v (%q)", err, prompt)
				}
				prompt = append(prompt, b)
			}
			if !strings.Contains(string(prompt), "Forget every record in "+p+"? [y/N] ") {
				t.Fatalf("prompt %q", prompt)
			}
			master.Write([]byte(answer + "\n"))
			rest := make([]byte, 512)
			n, _ := r.Read(rest)
			err = cmd.Wait()
			_, statErr := os.Stat(p)
			st, _ := os.Stat(p)
			kept := statErr == nil && st.Size() > 0
			switch answer {
			case "y":
				if err != nil || kept {
					t.Errorf("answered y: %v, history kept %v (%q)", err, kept, rest[:n])
				}
			default:
				if err == nil || !kept {
					t.Errorf("answered n: %v, history kept %v (%q)", err, kept, rest[:n])
				}
			}
		})
	}
}
