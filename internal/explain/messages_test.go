package explain

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/explain/i18n"
)

func TestEveryMessageIDHasEnglishAndPolish(t *testing.T) {
	cat := NewCatalog()
	ids := map[string]bool{}
	for _, c := range Categories() {
		ids[string(c)] = true
	}
	for _, r := range rules {
		if r.msg != "" {
			ids[r.msg] = true
		}
	}
	// Ids a refine function can return.
	for _, id := range []string{"unsupported_dtype.mps_bf16", "unsupported_dtype.mps_float64", "unsupported_dtype.cpu_half"} {
		ids[id] = true
	}
	en := map[string]bool{}
	for _, id := range cat.IDs(i18n.English) {
		en[id] = true
	}
	pl := map[string]bool{}
	for _, id := range cat.IDs(i18n.Polish) {
		pl[id] = true
	}
	for id := range ids {
		if !en[id] {
			t.Errorf("message id %q has no English text", id)
		}
	}
	for id := range en {
		if !pl[id] {
			t.Errorf("message id %q has no Polish text", id)
		}
	}
	for id := range pl {
		if !en[id] {
			t.Errorf("Polish message %q has no English original", id)
		}
	}
}

var placeholderRE = regexp.MustCompile(`\{([a-z_0-9]+)\}`)

func TestMessagesUseOnlyKnownPlaceholders(t *testing.T) {
	full := Numbers{RequestedBytes: i64(1), TotalBytes: i64(1), FreeBytes: i64(1), ReservedBytes: i64(4 << 30), AllocatedBytes: i64(1 << 30),
		OtherBytes: i64(1), DeviceIndex: ip(0), DriverVersion: sp("x"), DriverCUDAVersion: sp("12.4"), RuntimeVersion: sp("x"),
		ErrorCode: ip(1), Operator: sp("x"), DType: sp("x"), Devices: []string{"x"}}
	known := full.Vars()
	known["autocast"] = "torch.autocast(device_type=x.device.type)" // Message adds it from the device
	for lang, msgs := range map[string][]i18n.Message{"en": messagesEN, "pl": messagesPL} {
		for _, m := range msgs {
			text := m.Title + m.Explanation + strings.Join(m.Fixes, "")
			for _, sub := range placeholderRE.FindAllStringSubmatch(text, -1) {
				if _, ok := known[sub[1]]; !ok {
					t.Errorf("%s %q uses unknown placeholder {%s}", lang, m.ID, sub[1])
				}
			}
			if strings.Count(text, "[[") != strings.Count(text, "]]") {
				t.Errorf("%s %q has unbalanced [[ ]]", lang, m.ID)
			}
			if len(m.Fixes) == 0 {
				t.Errorf("%s %q has no fix", lang, m.ID)
			}
			r := m.Render(known)
			if strings.Contains(r.Explanation+strings.Join(r.Fixes, ""), "?") && !strings.Contains(text, "?") {
				t.Errorf("%s %q renders an unfilled placeholder with every number known: %q", lang, m.ID, r.Explanation)
			}
		}
	}
}

func TestMessageRendersNumbers(t *testing.T) {
	e := Classify([]byte("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 14.75 GiB of which 3.06 MiB is free."))
	tests := []struct {
		name, lang, want string
	}{
		{"English quotes requested, free and total", "en",
			"The run asked the GPU for more memory than was free (requested 20.0 MiB with 3.1 MiB free of 14.75 GiB on GPU 0). "},
		{"Polish quotes the same numbers", "pl_PL.UTF-8",
			"Program poprosił GPU o więcej pamięci, niż było wolne (żądano 20.0 MiB, wolne 3.1 MiB z 14.75 GiB na GPU 0). "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.Message(NewCatalog(), tt.lang).Explanation
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("Explanation = %q, want prefix %q", got, tt.want)
			}
		})
	}
}

func TestMessageWithoutNumbersDropsTheirSentencePart(t *testing.T) {
	e := Classify([]byte("RuntimeError: CUDA out of memory."))
	got := e.Message(NewCatalog(), "en")
	want := "The run asked the GPU for more memory than was free. "
	if !strings.HasPrefix(got.Explanation, want) {
		t.Errorf("Explanation = %q, want prefix %q", got.Explanation, want)
	}
	if diff := cmp.Diff("GPU out of memory", got.Title); diff != "" {
		t.Errorf("Title (-want +got):\n%s", diff)
	}
}

func TestCatalogIsFreshPerCall(t *testing.T) {
	a := NewCatalog()
	if err := a.Add("en", i18n.Message{ID: "doctor.check.shm", Title: "/dev/shm is small"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := NewCatalog().Lookup("doctor.check.shm", "en"); ok {
		t.Error("a message added to one catalogue leaked into another")
	}
}

// The README's example once printed the fragmentation sentence for
// reserved 3.50 GiB against allocated 3.49 GiB, where it is false.
func TestFragmentationSentenceOnlyWhenTrue(t *testing.T) {
	cat := NewCatalog()
	gib := func(f float64) *int64 { v := int64(f * (1 << 30)); return &v }
	tests := []struct {
		name string
		n    Numbers
		want bool
	}{
		{"reserved 3.50 GiB, allocated 3.49 GiB is not fragmentation", Numbers{RequestedBytes: gib(1.71), ReservedBytes: gib(3.50), AllocatedBytes: gib(3.49)}, false},
		{"2.30 GiB cached beyond 2.93 GiB allocated, for a 20 MiB request, is", Numbers{RequestedBytes: gib(0.02), ReservedBytes: gib(5.23), AllocatedBytes: gib(2.93)}, true},
		{"a cache smaller than the request is not", Numbers{RequestedBytes: gib(4), ReservedBytes: gib(8), AllocatedBytes: gib(5)}, false},
		{"without the reserved figure nothing is claimed", Numbers{AllocatedBytes: gib(1)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, lang := range []string{"en", "pl"} {
				e := Explanation{Category: CategoryOutOfMemory, MessageID: "out_of_memory", Numbers: tt.n}
				text := e.Message(cat, lang).Explanation
				got := strings.Contains(text, "fragment")
				if got != tt.want {
					t.Errorf("%s: fragmentation sentence shown = %v, want %v: %q", lang, got, tt.want, text)
				}
			}
		})
	}
}

func TestDTypeMismatchFixNamesTheDevice(t *testing.T) {
	cat := NewCatalog()
	for dev, want := range map[Device]string{
		DeviceCUDA: `torch.autocast(device_type="cuda", dtype=torch.float16)`,
		DeviceMPS:  `torch.autocast(device_type="mps", dtype=torch.float16)`,
		DeviceXLA:  `torch.autocast(device_type="xla", dtype=torch.bfloat16)`,
		DeviceCPU:  `torch.autocast(device_type="cpu", dtype=torch.bfloat16)`,
		DeviceXPU:  `torch.autocast(device_type="xpu")`,
		DeviceAny:  `torch.autocast(device_type=x.device.type)`,
	} {
		for _, lang := range []string{"en", "pl"} {
			m := Explanation{Category: CategoryDTypeMismatch, MessageID: string(CategoryDTypeMismatch), Device: dev}.Message(cat, lang)
			if !strings.Contains(strings.Join(m.Fixes, "\n"), want) {
				t.Errorf("%s %s: fixes %q do not hold %s", dev, lang, m.Fixes, want)
			}
		}
	}
}
