//go:build unix

package main

import (
	"net"
	"path/filepath"
	"testing"

	"github.com/devctl/devctl/internal/cmd/root"
	"github.com/devctl/devctl/internal/iostreams"
)

// TestServeListenExitCodes: a --listen that is wrong or unusable is the
// user's input: exit 2 and one line naming the value and what is
// accepted, nothing on stdout.
func TestServeListenExitCodes(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	accepted := "want host:port with a port from 1 to 65535, e.g. 127.0.0.1:9455 (this machine only) or :9455 (every interface); port 0 picks a free one"
	fx, _ := filepath.Abs("../../testdata/snapshots/nvidia-h100-pcie-x2.tar.gz")
	tests := []struct {
		name, listen, want string
	}{
		{"a port above 65535", ":99999", `devctl: invalid --listen ":99999": port "99999" is not a number from 0 to 65535; ` + accepted},
		{"a negative port", ":-1", `devctl: invalid --listen ":-1": port "-1" is not a number from 0 to 65535; ` + accepted},
		{"an empty port", ":", `devctl: invalid --listen ":": the port is empty; ` + accepted},
		{"a service name", "127.0.0.1:http", `devctl: invalid --listen "127.0.0.1:http": port "http" is not a number from 0 to 65535; ` + accepted},
		{"no port at all", "9455", `devctl: invalid --listen "9455": ` + accepted},
		{"a port in use", busy.Addr().String(), `devctl: invalid --listen "` + busy.Addr().String() + `": the address is already in use (another program, or another devctl serve, listens there); want a free port, e.g. :9456`},
		// 192.0.2.0/24 is TEST-NET-1 (RFC 5737): no machine has it.
		{"an address of no interface here", "192.0.2.1:9455", `devctl: invalid --listen "192.0.2.1:9455": no network interface of this machine has that address; want one of its addresses, 127.0.0.1 for this machine only, or no host (:9455) for every interface`},
	}
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir(), "NO_COLOR": "1"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			io, _, out, errOut := iostreams.Test()
			code := root.Main([]string{"--from", fx, "serve", "--listen", tc.listen}, io, lookup)
			if code != 2 || errOut.String() != tc.want+"\n" || out.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr\n%q\nwant exit 2 and\n%q", code, out, errOut, tc.want+"\n")
			}
		})
	}
}
