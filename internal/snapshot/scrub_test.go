package snapshot

import (
	"bytes"
	"context"
	"testing"

	"github.com/devctl/devctl/internal/host"
)

// TestPlantedSecretsAreScrubbedByValue plants secrets where a name-based
// filter cannot see them (a kernel command line word after the first, mount
// options, token-shaped values in allowed variables, a program's output and
// arguments) and greps the archive, compressed and unpacked, with and
// without --redact-host. Values are synthetic.
func TestPlantedSecretsAreScrubbedByValue(t *testing.T) {
	planted := []string{"PLANTEDkernelword", "PLANTEDaccess", "PLANTEDcifs", "PLANTEDxla", "PLANTEDurlpass", "PLANTEDvenv", "PLANTEDstdout", "PLANTEDarg"}
	h := fixtureHost(t, map[string]string{
		"proc/cmdline":        "BOOT_IMAGE=/vmlinuz iommu=pt token=PLANTEDkernelword quiet\n",
		"proc/self/mountinfo": "90 27 0:50 / /mnt/s3 rw - fuse.s3fs s3fs rw,access_key=PLANTEDaccess,secret=x\n91 27 0:51 / /mnt/sh rw - cifs //srv/sh rw,password=PLANTEDcifs,uid=0\n",
	}, host.MapEnv{
		"XLA_FLAGS":            "--xla_dump_to=/tmp --token=ghp_PLANTEDxlaAbCdEfGhIjKlMnOpQrStUv",
		"TPU_WORKER_HOSTNAMES": "https://u:PLANTEDurlpass@tpu-0,https://tpu-1",
		"VIRTUAL_ENV":          "/home/u/hf_PLANTEDvenvAbCdEfGhIjKlMnOpQr/venv",
	})
	h.Runner = fakeRunner{"tool --api-key PLANTEDarg": "url=https://x:PLANTEDstdout@h\n"}
	rec := NewRecorder(h)
	rh := rec.Host()
	for _, p := range []string{"/proc/cmdline", "/proc/self/mountinfo"} {
		if _, err := rh.FS.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"XLA_FLAGS", "TPU_WORKER_HOSTNAMES", "VIRTUAL_ENV"} {
		rh.LookupEnv(k)
	}
	rh.Runner.Run(context.Background(), "tool", "--api-key", "PLANTEDarg")
	for _, redact := range []bool{false, true} {
		data := archiveBytes(t, rec, WriteOptions{RedactHost: redact})
		raw := untar(t, data)
		if !bytes.Contains(raw, []byte("iommu=pt")) || !bytes.Contains(raw, []byte("uid=0")) || !bytes.Contains(raw, []byte("xla_dump_to")) {
			t.Fatalf("the planted files and variables were not recorded at all (redact=%v)", redact)
		}
		for _, hay := range [][]byte{data, raw} {
			for _, v := range planted {
				if bytes.Contains(hay, []byte(v)) {
					t.Errorf("%s found in the snapshot (redact=%v)", v, redact)
				}
			}
		}
	}
}
