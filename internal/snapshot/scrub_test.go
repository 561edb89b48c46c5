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

// TestIssue22ShapesNeverReachASnapshot plants the credential shapes issue
// 22 found kept (sources in internal/secret/shapes.go) in the variables
// they were found in, and greps the archive, compressed and unpacked.
func TestIssue22ShapesNeverReachASnapshot(t *testing.T) {
	secrets := map[string]string{
		"XLA_FLAGS":            "--xla_gpu_autotune_level=4 --header=Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
		"CUDA_VISIBLE_DEVICES": "sk_live_51HxQ2cLkT8vYp3RmZ9aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdEFGH",
		"VIRTUAL_ENV":          "/home/ci/glrt-t3_xZ8kLp2QvN7mRt4YwB9s/venv",
		"PATH":                 "/usr/bin:https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX:/bin",
	}
	planted := []string{"QWxhZGRpbjpvcGVuIHNlc2FtZQ", "sk_live_51HxQ2c", "glrt-t3_xZ8k", "XXXXXXXXXXXXXXXXXXXXXXXX"}
	h := fixtureHost(t, nil, host.MapEnv(secrets))
	rec := NewRecorder(h)
	for k := range secrets {
		rec.Host().LookupEnv(k)
	}
	for _, redact := range []bool{false, true} {
		data := archiveBytes(t, rec, WriteOptions{RedactHost: redact})
		raw := untar(t, data)
		if !bytes.Contains(raw, []byte("xla_gpu_autotune_level")) || !bytes.Contains(raw, []byte("hooks.slack.com/services/")) {
			t.Fatalf("the planted variables were not recorded at all (redact=%v)", redact)
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
