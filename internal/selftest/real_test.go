//go:build linux

package selftest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devctl/devctl/internal/backend"
)

// debianPython is Debian's interpreter, and debianTorch where its
// python3-torch package installs torch.
const (
	debianPython = "/usr/bin/python3"
	debianTorch  = "/usr/lib/python3/dist-packages/torch/__init__.py"
)

// TestRealTorch runs the real script on Debian's python3-torch (CPU) when it
// is installed (apt-get install python3-torch); CI keeps to the fakes.
func TestRealTorch(t *testing.T) {
	if _, err := os.Stat(debianTorch); err != nil {
		t.Skip("Debian's python3-torch is not installed")
	}
	o := Options{Python: debianPython, PythonSource: "test", Environ: os.Environ(), Timeout: 60 * time.Second,
		MemoryLimit: 4 << 30, Claims: map[backend.Backend][]string{backend.CPU: {"fp32", "bf16"}}, NetNS: true}
	r := Run(context.Background(), o)
	out, _ := json.MarshalIndent(r, "", "  ")
	t.Logf("report:\n%s", out)
	fw := torchOf(t, r)
	if fw.Status != Pass {
		t.Fatalf("torch: %s: %s", fw.Status, fw.Detail)
	}
	if len(fw.Devices) == 0 || fw.Devices[0].ID != "cpu" {
		t.Fatalf("devices %+v, want cpu first", fw.Devices)
	}
	// allocate, two copies, then five compute operations in each of fp32 and bf16.
	if n := len(fw.Devices[0].Ops); n != 3+5*2 {
		t.Errorf("%d operations on the CPU, want 13", n)
	}
	if r.Isolation.MemoryLimitBytes == nil || *r.Isolation.MemoryLimitBytes != 4<<30 {
		t.Errorf("memory limit %v, want the 4 GiB asked for", r.Isolation.MemoryLimitBytes)
	}
}

// TestNetworkNamespace checks that a child given a namespace sees no
// network interface but loopback.
func TestNetworkNamespace(t *testing.T) {
	dir := t.TempDir()
	py := filepath.Join(dir, "python3")
	script := "#!/bin/sh\ncat /proc/net/dev > \"$(dirname \"$0\")/netdev.$4\"\n"
	if err := os.WriteFile(py, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := Run(context.Background(), Options{Python: py, Timeout: 5 * time.Second, NetNS: true, Frameworks: []string{"torch"}})
	if r.Isolation.Network != NetworkNamespace {
		t.Skipf("no network namespace here: %s", r.Isolation.NetworkNote)
	}
	b, err := os.ReadFile(filepath.Join(dir, "netdev.torch"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n")[2:] {
		name, _, _ := strings.Cut(strings.TrimSpace(l), ":")
		if name != "" && name != "lo" {
			t.Errorf("the child sees interface %q; want only lo:\n%s", name, b)
		}
	}
	if _, err := exec.LookPath("unshare"); err == nil {
		t.Logf("host interfaces for comparison: %s", mustRead(t, "/proc/net/dev"))
	}
}

func mustRead(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
