package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/backend"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDefaultsNeedNoFile(t *testing.T) {
	cfg, err := Load(LoadOptions{LookupEnv: env(map[string]string{"XDG_CONFIG_HOME": t.TempDir()})})
	if err != nil {
		t.Fatal(err)
	}
	want := Device{
		Preferred: "auto", Precision: "auto", FallbackEnabled: true, MemoryStrategy: "balanced",
		MemoryFraction: 0.75, PlatformPriority: []backend.Backend{"cuda", "rocm", "xla", "neuron", "xpu", "mps", "cpu"},
	}
	if diff := cmp.Diff(want, cfg.Device); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	for _, k := range Keys {
		if cfg.Sources[k] != Default {
			t.Errorf("source of %s = %q, want default", k, cfg.Sources[k])
		}
	}
}

func TestLoadLayers(t *testing.T) {
	file := writeFile(t, "device:\n  preferred: cuda\n  precision: bf16\n  memory_strategy: conservative\n  platform_priority: [tpu, cpu]\n")
	tests := []struct {
		name    string
		env     map[string]string
		flags   map[string]Flag
		want    func(d Device) string // returns "" when as expected
		sources map[string]string
	}{
		{
			name: "the file overrides defaults",
			want: func(d Device) string {
				if d.Preferred != "cuda" || d.Precision != "bf16" || d.MemoryFraction != 0.6 || d.PlatformPriority[0] != "xla" {
					return "file values not applied"
				}
				return ""
			},
			sources: map[string]string{"device.precision": "file " + file},
		},
		{
			name: "the environment overrides the file",
			env:  map[string]string{"DEVCTL_PRECISION": "fp16", "DEVCTL_FALLBACK_ENABLED": "no"},
			want: func(d Device) string {
				if d.Precision != "fp16" || d.FallbackEnabled {
					return "env not applied"
				}
				return ""
			},
			sources: map[string]string{"device.precision": "env DEVCTL_PRECISION"},
		},
		{
			name:  "flags override the environment",
			env:   map[string]string{"DEVCTL_PRECISION": "fp16"},
			flags: map[string]Flag{"device.precision": {Name: "--precision", Value: "fp32"}},
			want: func(d Device) string {
				if d.Precision != "fp32" {
					return "flag not applied"
				}
				return ""
			},
			sources: map[string]string{"device.precision": "flag --precision"},
		},
		{
			name:  "a fraction from a higher layer than the strategy makes it custom",
			flags: map[string]Flag{"device.memory_fraction": {Name: "--memory-fraction", Value: "0.5"}},
			want: func(d Device) string {
				if d.MemoryStrategy != "custom" || d.MemoryFraction != 0.5 {
					return "fraction did not win"
				}
				return ""
			},
		},
		{
			name:  "a fraction flag beats a strategy from the environment and is named as what made it custom",
			env:   map[string]string{"DEVCTL_MEMORY_STRATEGY": "aggressive"},
			flags: map[string]Flag{"device.memory_fraction": {Name: "--memory-fraction", Value: "0.5"}},
			want: func(d Device) string {
				if d.MemoryStrategy != "custom" || d.MemoryFraction != 0.5 {
					return "the flag's fraction did not win over the environment's strategy"
				}
				return ""
			},
			sources: map[string]string{
				"device.memory_strategy": "implied by flag --memory-fraction",
				"device.memory_fraction": "flag --memory-fraction",
			},
		},
		{
			name:  "a strategy flag over a fraction from the environment fixes the fraction and is named as its source",
			env:   map[string]string{"DEVCTL_MEMORY_FRACTION": "0.5"},
			flags: map[string]Flag{"device.memory_strategy": {Name: "--memory-strategy", Value: "conservative"}},
			want: func(d Device) string {
				if d.MemoryStrategy != "conservative" || d.MemoryFraction != 0.6 {
					return "the flag's strategy did not fix the fraction"
				}
				return ""
			},
			sources: map[string]string{
				"device.memory_strategy": "flag --memory-strategy",
				"device.memory_fraction": "implied by flag --memory-strategy",
			},
		},
		{
			name: "a fraction and strategy that agree in one layer are accepted",
			env:  map[string]string{"DEVCTL_MEMORY_STRATEGY": "aggressive", "DEVCTL_MEMORY_FRACTION": "0.9"},
			want: func(d Device) string {
				if d.MemoryStrategy != "aggressive" || d.MemoryFraction != 0.9 {
					return "agreeing strategy and fraction not kept"
				}
				return ""
			},
		},
		{
			name: "a strategy from a higher layer fixes the fraction",
			env:  map[string]string{"DEVCTL_MEMORY_STRATEGY": "aggressive"},
			want: func(d Device) string {
				if d.MemoryStrategy != "aggressive" || d.MemoryFraction != 0.9 {
					return "strategy did not win"
				}
				return ""
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(LoadOptions{File: file, LookupEnv: env(tt.env), Flags: tt.flags})
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.want(cfg.Device); msg != "" {
				t.Errorf("%s: %+v", msg, cfg.Device)
			}
			for k, v := range tt.sources {
				if cfg.Sources[k].String() != v {
					t.Errorf("source of %s = %q, want %q", k, cfg.Sources[k], v)
				}
			}
		})
	}
}

func TestLoadRejectsBadValues(t *testing.T) {
	tests := []struct {
		name string
		file string
		env  map[string]string
		want string
	}{
		{name: "a fraction above one", env: map[string]string{"DEVCTL_MEMORY_FRACTION": "1.5"}, want: `device.memory_fraction "1.5" (from env DEVCTL_MEMORY_FRACTION): out of range`},
		{name: "a fraction of zero", env: map[string]string{"DEVCTL_MEMORY_FRACTION": "0"}, want: "out of range"},
		{name: "a fraction that is not a number", env: map[string]string{"DEVCTL_MEMORY_FRACTION": "NaN"}, want: "want a number greater than 0"},
		{name: "an unknown strategy", env: map[string]string{"DEVCTL_MEMORY_STRATEGY": "yolo"}, want: "want one of conservative, balanced, aggressive, custom"},
		{name: "an unknown precision", env: map[string]string{"DEVCTL_PRECISION": "fp64"}, want: "want one of auto, fp32, fp16, bf16, 8bit, 4bit"},
		{name: "an unknown device", env: map[string]string{"DEVCTL_DEVICE": "gpu"}, want: `device.preferred "gpu"`},
		{name: "a cpu index", env: map[string]string{"DEVCTL_DEVICE": "cpu:0"}, want: `device.preferred "cpu:0"`},
		{name: "a fallback that is not a boolean", env: map[string]string{"DEVCTL_FALLBACK_ENABLED": "maybe"}, want: "want true or false"},
		{name: "malformed YAML names the line", file: "device:\n  precision: bf16\n   x: [\n", want: "line 3"},
		{name: "an unknown key", file: "device:\n  prefered: cuda\n", want: `unknown key "device.prefered"`},
		{name: "an unknown section", file: "devices:\n  preferred: cuda\n", want: `unknown section "devices"`},
		{name: "a priority with an unknown backend", file: "device:\n  platform_priority: [cuda, gpu]\n", want: `platform_priority entry "gpu"`},
		{name: "a fraction and strategy that disagree in one file", file: "device:\n  memory_strategy: balanced\n  memory_fraction: 0.5\n", want: "conflicts with device.memory_strategy balanced"},
		{name: "a list where one value belongs is named as a list", file: "device:\n  preferred: [cuda]\n", want: "device.preferred: want a single value, not a list"},
		{name: "an empty value is named as empty, not as false", file: "device:\n  fallback_enabled: ~\n", want: "device.fallback_enabled: want a single value, not an empty value"},
		{name: "a nested list in the priority is refused", file: "device:\n  platform_priority: [[cpu]]\n", want: "device.platform_priority entry [cpu]: want backend names"},
		{name: "a mapping as the priority is refused", file: "device:\n  platform_priority: {a: b}\n", want: "device.platform_priority: want a list of backends"},
		{name: "several YAML errors stay on one line", file: "device:\n  preferred: cpu\n  preferred: cuda\n  precision: fp16\n  precision: bf16\n", want: "line 3: mapping key \"preferred\" already defined at line 2; line 5"},
		{name: "the removed enable_optimizations key says it was removed", file: "device:\n  enable_optimizations: true\n", want: "device.enable_optimizations was removed: it was never used by any command; delete the line"},
		{name: "a device section that is not a mapping is refused", file: "device: 5\n", want: "device must be a mapping of settings"},
		{name: "an empty priority is refused", file: "device:\n  platform_priority: []\n", want: "device.platform_priority is empty"},
		{name: "a priority entry from a variable-free file names its file", file: "device:\n  platform_priority: cuda,metal\n", want: `entry "metal" (from file `},
		{name: "a file over the size bound is refused before parsing", file: "device: {}\n#" + strings.Repeat("x", MaxFileBytes), want: "larger than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := LoadOptions{LookupEnv: env(tt.env)}
			if tt.file != "" {
				opts.File = writeFile(t, tt.file)
			} else {
				opts.File = writeFile(t, "device: {}\n")
			}
			_, err := Load(opts)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans several lines", err)
			}
		})
	}
}

func TestLoadDefaultFileThatIsADirectoryDoesNotBlameConfigFlag(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "devctl", "config.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Load(LoadOptions{LookupEnv: env(map[string]string{"XDG_CONFIG_HOME": dir})})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
	if strings.Contains(err.Error(), "--config") || !strings.Contains(err.Error(), "config file ") {
		t.Errorf("error %q should name the default config file, not --config", err)
	}
}

func TestLoadMissingExplicitFileIsAnError(t *testing.T) {
	_, err := Load(LoadOptions{File: filepath.Join(t.TempDir(), "nope.yaml")})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
}

func FuzzLoadFile(f *testing.F) {
	f.Add([]byte("device:\n  preferred: cuda\n"))
	f.Add([]byte("device: [1, 2]\n"))
	f.Add([]byte("device:\n  memory_fraction: .5\n  memory_strategy: custom\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(LoadOptions{File: p})
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error without ErrInvalid: %v", err)
			}
			return
		}
		if f := cfg.Device.MemoryFraction; f <= 0 || f > 1 {
			t.Fatalf("accepted fraction %v", f)
		}
	})
}

func TestParseFraction(t *testing.T) {
	type result struct {
		F  float64
		OK bool
	}
	tests := []struct {
		name string
		in   string
		want result
	}{
		{"three quarters is a fraction", "0.75", result{0.75, true}},
		{"exactly one is the whole device and is accepted", "1", result{1, true}},
		{"just above one is refused", "1.0001", result{0, false}},
		{"zero is refused", "0", result{0, false}},
		{"a negative number is refused", "-0.5", result{0, false}},
		{"infinity is refused", "Inf", result{0, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFraction(tt.in)
			if diff := cmp.Diff(tt.want, result{f, err == nil}); diff != "" {
				t.Errorf("ParseFraction(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestDefaultsNameEveryBackendInRankOrder(t *testing.T) {
	cfg, err := Load(LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(backend.All(), cfg.Device.PlatformPriority); diff != "" {
		t.Errorf("configs/default.yaml platform_priority (-backend.All +file):\n%s", diff)
	}
	if want := "One of: auto, " + backend.Help() + ", or a device id"; !strings.Contains(string(configs.DefaultYAML), want) {
		t.Errorf("configs/default.yaml does not list the backends as %q", want)
	}
}

func TestLoadReadsEveryLayerOnce(t *testing.T) {
	file := writeFile(t, "device:\n  precision: fp16\n  platform_priority: tpu cpu\n  memory_strategy: aggressive\n")
	cfg, err := Load(LoadOptions{
		File:      file,
		LookupEnv: env(map[string]string{"DEVCTL_DEVICE": "TPU:1", "DEVCTL_FALLBACK_ENABLED": "off"}),
		Flags:     map[string]Flag{"device.precision": {Name: "--precision", Value: "BF16"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Device{Preferred: "xla:1", Precision: "bf16", FallbackEnabled: false, MemoryStrategy: "aggressive",
		MemoryFraction: 0.9, PlatformPriority: []backend.Backend{backend.XLA, backend.CPU}}
	if diff := cmp.Diff(want, cfg.Device); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	wantSources := map[string]Source{
		"device.preferred": {Layer: LayerEnv, Name: "DEVCTL_DEVICE"}, "device.precision": {Layer: LayerFlag, Name: "--precision"},
		"device.fallback_enabled": {Layer: LayerEnv, Name: "DEVCTL_FALLBACK_ENABLED"}, "device.memory_strategy": {Layer: LayerFile, Name: file},
		"device.memory_fraction": {Layer: LayerFile, Name: file, Implied: true}, "device.platform_priority": {Layer: LayerFile, Name: file}, "device.allow_cpu": Default,
	}
	if diff := cmp.Diff(wantSources, cfg.Sources); diff != "" {
		t.Errorf("sources (-want +got)\n%s", diff)
	}
}

func TestAllowCPU(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		want    bool
		source  string
		wantErr string
	}{
		{"off by default", "", nil, false, "default", ""},
		{"DEVCTL_ALLOW_CPU=1 turns it on", "", map[string]string{"DEVCTL_ALLOW_CPU": "1"}, true, "env DEVCTL_ALLOW_CPU", ""},
		{"the file key turns it on", "device:\n  allow_cpu: true\n", nil, true, "file", ""},
		{"the variable wins over the file", "device:\n  allow_cpu: true\n", map[string]string{"DEVCTL_ALLOW_CPU": "false"}, false, "env DEVCTL_ALLOW_CPU", ""},
		{"a bad value is refused with its source", "", map[string]string{"DEVCTL_ALLOW_CPU": "maybe"}, false, "", `device.allow_cpu "maybe" (from env DEVCTL_ALLOW_CPU): want true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := LoadOptions{LookupEnv: env(tt.env)}
			if tt.file != "" {
				o.File = writeFile(t, tt.file)
			}
			cfg, err := Load(o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Device.AllowCPU != tt.want || !strings.HasPrefix(cfg.Sources["device.allow_cpu"].String(), tt.source) {
				t.Errorf("allow_cpu %v from %s, want %v from %s", cfg.Device.AllowCPU, cfg.Sources["device.allow_cpu"], tt.want, tt.source)
			}
		})
	}
}

// The built-in defaults are a Go value (Load does not parse YAML at every
// start); configs/default.yaml documents them and must say the same.
func TestDefaultsAreDefaultYAML(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal(configs.DefaultYAML, &doc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(doc, Defaults()); diff != "" {
		t.Errorf("configs/default.yaml (-) and Defaults() (+) differ:\n%s", diff)
	}
}

// TestAMultiDocumentFileIsBadInput: viper read the first document of a
// multi-document file and silently dropped the rest (issue 22), so
// `precision: fp16` in a second document was ignored. The file is refused
// with the line where the second document starts; a trailing "---" alone
// is not a second document.
func TestAMultiDocumentFileIsBadInput(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"a second document with settings", "device:\n  preferred: cpu\n---\ndevice:\n  precision: fp16\n", "line 3: a second YAML document"},
		{"a second document after an explicit start", "---\ndevice:\n  preferred: cpu\n---\ndevice: {}\n", "line 4: a second YAML document"},
		{"a third document after an empty second", "device: {}\n---\n---\ndevice: {}\n", "a second YAML document"},
		{"a second document that does not parse", "device: {}\n---\nx: [\n", "config.yaml: line 3: did not find expected node content"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(LoadOptions{File: writeFile(t, c.body), LookupEnv: env(map[string]string{})})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want a one-line ErrInvalid containing %q", err, c.want)
			}
		})
	}
	for _, body := range []string{"device:\n  preferred: cpu\n", "---\ndevice:\n  preferred: cpu\n", "device:\n  preferred: cpu\n---\n", "device:\n  preferred: cpu\n...\n"} {
		cfg, err := Load(LoadOptions{File: writeFile(t, body), LookupEnv: env(map[string]string{})})
		if err != nil || cfg.Device.Preferred != "cpu" {
			t.Errorf("%q: %v, preferred %q", body, err, cfg.Device.Preferred)
		}
	}
}
