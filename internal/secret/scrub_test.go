package secret

import (
	"strings"
	"testing"
	"time"

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
	// The shapes of issue 22 (sources in shapes.go): RFC 7617's own
	// example, Slack's documented webhook URL, Microsoft's SAS example;
	// the Stripe and GitLab bodies are synthetic.
	basicHeader = "Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
	stripeLive  = "sk_live_51HxQ2cLkT8vYp3RmZ9aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdEFGH"
	stripeRK    = "rk_live_51HxQ2cLkT8vYp3RmZ9aBcDeFgH"
	glrt        = "glrt-t3_xZ8kLp2QvN7mRt4YwB9s"
	slackHook   = "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
	sasURL      = "https://myaccount.blob.core.windows.net/?restype=service&comp=properties&sv=2015-04-05&ss=bf&st=2015-04-29T22%3A18%3A26Z&se=2015-04-30T02%3A23%3A26Z&sr=b&sp=rw&sip=168.1.5.60-168.1.5.70&spr=https&sig=F%6GRVAZ5Cdj2Pw4tgU7IlSTkWgn7bUkkAg8P6HESXwmf%4B"
)

// TestScrubIssue22Shapes holds the credential shapes the issue found kept
// in a snapshot, each inside the variable it was planted in.
func TestScrubIssue22Shapes(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"an Authorization: Basic header inside XLA_FLAGS", "--xla_gpu_autotune_level=4 --header=" + basicHeader,
			"--xla_gpu_autotune_level=4 --header=Authorization: [withheld]"},
		{"a quoted header keeps what follows the quote", `-H "` + basicHeader + `" -v`, `-H "Authorization: [withheld]" -v`},
		{"Basic credentials without the header name", "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==", "[withheld]"},
		{"a Stripe live secret key as CUDA_VISIBLE_DEVICES", stripeLive, "[withheld]"},
		{"a Stripe restricted key in a path", "/opt/" + stripeRK + "/bin", "/opt/[withheld]/bin"},
		{"a GitLab runner token inside VIRTUAL_ENV", "/home/ci/" + glrt + "/venv", "/home/ci/[withheld]/venv"},
		{"a Slack webhook URL inside PATH", "/usr/bin:" + slackHook + ":/bin", "/usr/bin:https://hooks.slack.com/services/[withheld]:/bin"},
		{"the signature of an Azure SAS URL", sasURL, strings.Replace(sasURL, "F%6GRVAZ5Cdj2Pw4tgU7IlSTkWgn7bUkkAg8P6HESXwmf%4B", "[withheld]", 1)},
		{"a token query parameter", "https://mirror.example/x?token=abc&v=1", "https://mirror.example/x?token=[withheld]&v=1"},
		{"an X-Api-Key header", "X-Api-Key: 12345-abcde", "X-Api-Key: [withheld]"},
		{"a Cookie header", "Cookie: session=abc; theme=dark", "Cookie: [withheld]"},
		{"a header after an innocent one on the same line", "Accept: */* Proxy-Authorization: Basic dTpw", "Accept: */* Proxy-Authorization: [withheld]"},
		{"a high-entropy word in an innocent variable", "/srv/x7Kq9ZrT2bWmN4pL8sVd1cYhF3gJ6aQe0uRi/run", "/srv/[withheld]/run"},
		{"a key: value pair with a compound secret key", "api_key: abc123", "api_key: [withheld]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Scrub(tt.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestScrubKeepsWhatOnlyLooksSecret pins the other side of the bar: what
// devctl must record for a replay to be useful stays as it was.
func TestScrubKeepsWhatOnlyLooksSecret(t *testing.T) {
	for _, in := range []string{
		"GPU-5fd4e3f0-0e7b-4c36-a4f8-3d0a3b1b2c9d,MIG-GPU-5fd4e3f0-0e7b-4c36-a4f8-3d0a3b1b2c9d/1/0",
		"/nix/store/a3f5c9e1b7d24f6a8c0e2b4d6f8a0c2e-python3-3.11.9/bin",
		"usb:v1D6Bp0002d0515dc09dsc00dp01ic09isc00ip00in00",
		"pci:v000010DEd00002330sv000010DEsd000016C1bc03sc02i00",
		"/home/u/.cache/huggingface/hub/models--meta-llama--Llama-2-7b-hf/snapshots",
		"TensorflowDistributedStrategy2Options pytorchCuda121Python311Env2024Version",
		"basic information, Basic mode, basic-auth disabled",
		"flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr",
		"nfsd: auth: none; ssh: connected",
		"https://huggingface.co/org/model@main",
	} {
		if got := Scrub(in); got != in {
			t.Errorf("Scrub(%q) = %q, want it kept", in, got)
		}
	}
}

// TestRandom pins the thresholds' measured examples (random.go).
func TestRandom(t *testing.T) {
	for word, want := range map[string]bool{
		"x7Kq9ZrT2bWmN4pL8sVd1cYhF3gJ6aQe0uRi":              true,
		"QWxhZGRpbjpvcGVuIHNlc2FtZQ":                        true,
		"4eC39HqLyjWDarjtT1zdp7dc":                          true,
		"TensorflowDistributedStrategy2Options":             false,
		"pytorchCuda121Python311Env2024Version":             false,
		"v000010DEd00002330sv000010DEsd000016C1bc03sc02i00": false,
		"v1D6Bp0002d0515dc09dsc00dp01ic09isc00ip00in00":     false,
		"XXXXXXXXXXXXXXXXXXXXXXXX":                          false,
		"aB3dE5fG7hJ9kL1mN2pQ":                              false, // shorter than 24
	} {
		if got := Random([]byte(word)); got != want {
			t.Errorf("Random(%q) = %v, want %v", word, got, want)
		}
	}
}

func TestScrubJSON(t *testing.T) {
	in := `{"command":"` + stripeLive + `","n":1,"nested":{"url":"https://u:p@h"},"keep":"<a100>"}`
	want := `{"command":"[withheld]","keep":"<a100>","n":1,"nested":{"url":"https://[withheld]@h"}}`
	if got := string(ScrubJSON([]byte(in))); got != want {
		t.Errorf("ScrubJSON = %s, want %s", got, want)
	}
	clean := []byte(`{"a": "b"}`)
	if got := ScrubJSON(clean); &got[0] != &clean[0] {
		t.Error("a document without secrets was rewritten")
	}
}

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

// FuzzScrub checks, for any text, that scrubbing is idempotent and that a
// credential of every shape planted into it, wherever it stands and
// whatever follows it, never survives.
func FuzzScrub(f *testing.F) {
	for _, s := range []string{"token=abc", "https://u:p@h", "--password x", `{"key":"v"}`, "iommu=pt token=S", ghp,
		basicHeader, stripeLive, glrt, slackHook, sasURL, "Accept: x Cookie: y", "Basic dTpw"} {
		f.Add(s, "", uint8(0))
	}
	f.Add("prefix ", ghp, uint8(3))
	planted := []struct{ secret, shape string }{
		{ghp, ghp}, {stripeLive, stripeLive}, {stripeRK, stripeRK}, {glrt, glrt}, {hf, hf}, {akia, akia}, {jwt, jwt},
		{"QWxhZGRpbjpvcGVuIHNlc2FtZQ==", basicHeader},
		{"T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", slackHook},
		{"x7Kq9ZrT2bWmN4pL8sVd1cYhF3gJ6aQe0uRi", "x7Kq9ZrT2bWmN4pL8sVd1cYhF3gJ6aQe0uRi"},
	}
	f.Fuzz(func(t *testing.T, text, tail string, which uint8) {
		got := Scrub(text)
		if again := Scrub(got); again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", text, got, again)
		}
		p := planted[int(which)%len(planted)]
		if strings.Contains(text+tail, p.secret) {
			return // only the planted copy is promised gone
		}
		for _, sep := range []string{" ", "\n", ":", "=", "/", ","} {
			withSecret := text + sep + p.shape + sep + tail
			if strings.Contains(Scrub(withSecret), p.secret) {
				t.Fatalf("%s survived in %q", p.secret, withSecret)
			}
		}
		Cmdline([]byte(text))
	})
}

// TestScrubIsLinear feeds every rule 256 KiB of its own trigger. Linear
// rules take milliseconds (seconds under -race, which slows regexps a
// hundredfold); a rule that rescans the rest of a line per match, as the
// first header rule did (found by FuzzScrub), takes 256 Ki × 128 KiB
// regexp steps, minutes, and fails the 30 s bound.
func TestScrubIsLinear(t *testing.T) {
	for _, unit := range []string{"a:", "x-api-key:", "Basic ", "basic dTpw ", "a=", "token=", "--token ", `"token":"`,
		"https://a@", "hooks.slack.com/services/", "aB3", "sk_live_", "gl", ": ", "-"} {
		s := strings.Repeat(unit, (256<<10)/len(unit))
		start := time.Now()
		Scrub(s)
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("256 KiB of %q took %v", unit, d)
		}
	}
}
