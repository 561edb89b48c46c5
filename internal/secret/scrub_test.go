package secret

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Tokens below are synthetic: real prefixes and lengths, random bodies.
const (
	ghp   = "ghp_x7Kq9ZrT2bWmN4pL8sVd1cYhF3gJ6aQe0uRi"
	hf    = "hf_QmZxvNrTbKpLwYs4d8GhJ2cFa6eUoI9tRkEnWy"
	sk    = "sk-proj-4fR7tY9uIoP2aSdF6gHjK8lZxCvBnM1q"
	slack = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp"
	akia  = "AKIAIOSFODNN7EXAMPLE"
	glpat = "glpat-aB3dE5fG7hJ9kL1mN2pQ"
	jwt   = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)

func TestScrub(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain text is kept", "NVIDIA A100-SXM4-80GB, 81920 MiB", "NVIDIA A100-SXM4-80GB, 81920 MiB"},
		{"a GitHub token inside a flag is masked", "--xla_dump_to=/tmp --token=" + ghp, "--xla_dump_to=/tmp --token=[withheld]"},
		{"a GitHub token in a path is masked by shape", "/home/u/" + ghp + "/venv", "/home/u/[withheld]/venv"},
		{"a Hugging Face token under an innocent key is masked", "HF_HUB=" + hf, "HF_HUB=[withheld]"},
		{"OpenAI, Slack, AWS, GitLab tokens and a JWT are masked",
			sk + " " + slack + " " + akia + " " + glpat + " " + jwt,
			"[withheld] [withheld] [withheld] [withheld] [withheld]"},
		{"URL userinfo is masked", "https://u:SECRET@tpu-0,https://tpu-1", "https://[withheld]@tpu-0,https://tpu-1"},
		{"a URL without userinfo is kept", "https://huggingface.co/org/model@main", "https://huggingface.co/org/model@main"},
		{"kernel command line words with secret keys", "BOOT_IMAGE=/vmlinuz root=UUID=1 iommu=pt token=SECRET rd.luks.key=/k quiet\n",
			"BOOT_IMAGE=/vmlinuz root=UUID=1 iommu=pt token=[withheld] rd.luks.key=[withheld] quiet\n"},
		{"mount options with credentials", "rw,relatime,vers=3.0,username=bob,password=hunter2,access_key=AK,secret=s3,credentials=/root/.smb,uid=0",
			"rw,relatime,vers=3.0,username=bob,password=[withheld],access_key=[withheld],secret=[withheld],credentials=[withheld],uid=0"},
		{"an option and its separate value", "--model m --api-key abc123 -v", "--model m --api-key [withheld] -v"},
		{"a JSON pair with a secret key", `{"token": "abc", "name": "a100"}`, `{"token": "[withheld]", "name": "a100"}`},
		{"a bearer token", "Authorization: Bearer abcdefghijklmnop.qrs", "Authorization: [withheld]"},
		{"a PEM private key", "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\ny", "x\n[withheld]\ny"},
		{"words that only look like prefixes are kept", "disk-by-uuid task-sk-1 hf_short ghp_ tokenizers=fast", "disk-by-uuid task-sk-1 hf_short ghp_ tokenizers=fast"},
		{"an already withheld value stays the same", "token=[withheld] https://[withheld]@h", "token=[withheld] https://[withheld]@h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Scrub(tt.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCmdline(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"an ordinary command line is kept", "python\x00train.py\x00--epochs=3\x00", "python\x00train.py\x00--epochs=3\x00"},
		{"an option=value secret is masked", "x\x00--hf-token=abc\x00", "x\x00--hf-token=[withheld]\x00"},
		{"the argument after a secret option is masked", "x\x00--password\x00abc\x00-v\x00", "x\x00--password\x00[withheld]\x00-v\x00"},
		{"a positional word that looks secret is kept", "x\x00token\x00", "x\x00token\x00"},
		{"a token-shaped argument is masked", "git\x00clone\x00https://" + ghp + "@github.com/o/r\x00", "git\x00clone\x00https://[withheld]@github.com/o/r\x00"},
		{"a kernel command line is scrubbed word by word, not just the first", "iommu=pt token=SECRET quiet\n", "iommu=pt token=[withheld] quiet\n"},
		{"empty stays empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, string(Cmdline([]byte(tt.in)))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"HF_TOKEN", true}, {"HUGGING_FACE_HUB_TOKEN", true}, {"GITHUB_TOKEN", true}, {"GHTOKEN", true},
		{"AWS_SECRET_ACCESS_KEY", true}, {"AWS_ACCESS_KEY_ID", true}, {"OPENAI_API_KEY", true}, {"APIKEY", true},
		{"DB_PASSWORD", true}, {"PGPASSWORD", true}, {"DB_PASS", true}, {"MYSQL_PWD_PASSWD", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", true}, {"SSH_AUTH_SOCK", true}, {"AUTHORIZATION", true},
		{"SESSION_ID", true}, {"browser_cookie", true}, {"TLS_PRIVATE_PEM", true}, {"npm_config__authToken", true},
		{"DEPLOY_SSHKEY", true}, {"SUPABASE_JWT", true}, {"db-pass", true}, {"oauth.bearer", true},
		{"access_key", true}, {"credentials", true},
		{"CUDA_VISIBLE_DEVICES", false}, {"KEYBOARD_LAYOUT", false}, {"TOKENIZERS_PARALLELISM", false},
		{"PWD", false}, {"PATH", false}, {"TPU_ACCELERATOR_TYPE", false}, {"HSA_OVERRIDE_GFX_VERSION", false},
		{"XLA_PYTHON_CLIENT_MEM_FRACTION", false}, {"username", false},
	}
	for _, tt := range tests {
		if got := Name(tt.name); got != tt.want {
			t.Errorf("Name(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func FuzzScrub(f *testing.F) {
	for _, s := range []string{"token=abc", "https://u:p@h", "--password x", `{"key":"v"}`, "iommu=pt token=S", ghp} {
		f.Add(s, "")
	}
	f.Add("prefix ", ghp)
	f.Fuzz(func(t *testing.T, text, planted string) {
		got := Scrub(text)
		if again := Scrub(got); again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", text, got, again)
		}
		// A planted token, wherever it stands, never survives.
		withToken := text + " " + ghp + planted
		if strings.Contains(Scrub(withToken), ghp) {
			t.Fatalf("token survived in %q", withToken)
		}
		Cmdline([]byte(text))
	})
}
