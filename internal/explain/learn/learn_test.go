package learn

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFeaturesAreSortedDistinctAndInRange(t *testing.T) {
	for _, text := range []string{
		"RuntimeError: CUDA error: an illegal memory access was encountered",
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
		"运行失败，Loading checkpoint未达到100%被kill了",
		"", "a", strings.Repeat("x", 200),
	} {
		f := Features([]byte(text), 1<<10, nil)
		for i, v := range f {
			if v >= 1<<10 {
				t.Errorf("%q: feature %d out of range", text, v)
			}
			if i > 0 && f[i-1] >= v {
				t.Errorf("%q: features not sorted and distinct: %v", text, f)
				break
			}
		}
	}
}

func TestFeaturesReadIdentifiersAndNumbers(t *testing.T) {
	has := func(text string, kind byte, word string) bool {
		want := hashFeature(kind, []byte(word), nil) & (1<<20 - 1)
		for _, g := range Features([]byte(text), 1<<20, nil) {
			if g == want {
				return true
			}
		}
		return false
	}
	tests := []struct {
		name, text, word string
		kind             byte
		want             bool
	}{
		{"a camelCase name gives its pieces", "cudaErrorMemoryAllocation", "memory", kindPart, true},
		{"a snake_case name gives its pieces", "CUDA_ERROR_OUT_OF_MEMORY", "memory", kindPart, true},
		{"case does not matter", "CUDA Out Of Memory", "memory", kindWord, true},
		{"a long number is a placeholder, not itself", "allocated 7406166528 bytes", "7406166528", kindWord, false},
		{"a long number becomes the placeholder", "allocated 7406166528 bytes", "0000", kindWord, true},
		{"a short number is itself", "CUDA error 700", "700", kindWord, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := has(tt.text, tt.kind, tt.word); got != tt.want {
				t.Errorf("%q holds %q: %v, want %v", tt.text, tt.word, got, tt.want)
			}
		})
	}
}

func TestWindowKeepsShortLogsAndTheErrorLinesOfLongOnes(t *testing.T) {
	short := []byte("line one\nRuntimeError: boom\n")
	if got := Window(short); !bytes.Equal(got, short) {
		t.Errorf("a short log: Window = %q, want it whole", got)
	}
	var long bytes.Buffer
	for long.Len() < 1<<20 {
		long.WriteString("epoch 3 step 100 loss 1.2345 lr 0.0001\n")
	}
	long.WriteString("RuntimeError: CUDA error: an illegal memory access was encountered\n")
	w := Window(long.Bytes())
	if len(w) > windowMax+4<<10 {
		t.Errorf("Window of 1 MiB is %d bytes, want at most %d", len(w), windowMax)
	}
	if !bytes.Contains(w, []byte("illegal memory access")) || bytes.Contains(w, []byte("loss 1.2345")) {
		t.Errorf("Window = %q, want the error line without the progress lines", w)
	}
}

// TestTrainSeparatesAndRoundTrips trains on a toy corpus, and checks the
// encoded model decodes to the same answers.
func TestTrainSeparatesAndRoundTrips(t *testing.T) {
	classes := []string{"oom", "nccl", "unknown"}
	texts := map[int][]string{
		0: {"CUDA out of memory. Tried to allocate", "HIP out of memory", "ran out of memory on the GPU", "OutOfMemoryError: out of memory"},
		1: {"NCCL error unhandled system error", "NCCL WARN Net: connection closed", "ncclInternalError NCCL", "watchdog NCCL timeout collective"},
		2: {"ModuleNotFoundError: No module named yaml", "KeyError: state_dict", "FileNotFoundError: config.json", "ValueError: bad tokenizer"},
	}
	opt := Options{LogBuckets: 12, Epochs: 20, Rate: 0.5, L2: 1e-4, Seed: 1}
	var ex []Example
	for label, ts := range texts {
		for _, s := range ts {
			ex = append(ex, Example{Features: DocFeatures([]byte(s), 1<<opt.LogBuckets, nil), Label: label})
		}
	}
	m := Train(ex, classes, opt)
	c, err := Decode(m.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(classes, c.Classes); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
	probe := map[string]int{"torch.cuda.OutOfMemoryError: CUDA out of memory": 0, "NCCL error in ProcessGroupNCCL": 1, "ModuleNotFoundError: No module named torch": 2}
	for s, want := range probe {
		f := DocFeatures([]byte(s), c.Buckets(), nil)
		pf, pc := make([]float64, 3), make([]float64, 3)
		m.Probs(f, pf)
		c.Probs(f, pc)
		best := 0
		for k := range pc {
			if pc[k] > pc[best] {
				best = k
			}
			if math.Abs(pf[k]-pc[k]) > 0.05 {
				t.Errorf("%q: float %.3f and int8 %.3f differ for %s", s, pf[k], pc[k], classes[k])
			}
		}
		if best != want {
			t.Errorf("%q: predicted %s, want %s (%v)", s, classes[best], classes[want], pc)
		}
	}
	if !bytes.Equal(m.Encode(), Train(ex, classes, opt).Encode()) {
		t.Error("training twice gave two models")
	}
}

func TestDecodeRefusesBadBytes(t *testing.T) {
	good := Train([]Example{{Features: []uint32{1}, Label: 0}}, []string{"a", "b"}, Options{LogBuckets: 4, Epochs: 1, Rate: 0.1, Seed: 1}).Encode()
	for name, b := range map[string][]byte{
		"empty": nil, "wrong magic": append([]byte("XXXX"), good[4:]...), "cut short": good[:len(good)-1],
		"wrong version": append(append([]byte{}, good[:4]...), append([]byte{9}, good[5:]...)...),
	} {
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: Decode accepted it", name)
		}
	}
	if _, err := Decode(good); err != nil {
		t.Errorf("Decode(good) = %v", err)
	}
}

func FuzzFeatures(f *testing.F) {
	for _, s := range []string{"cudaErrorMemoryAllocation", "CUDA_ERROR_X", "被kill了", "\xff\xfe", "a_b_c__", "# title\nerror: x\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, v := range DocFeatures(b, 1<<8, nil) {
			if v >= 1<<8 {
				t.Fatalf("feature %d out of range", v)
			}
		}
		Window(b)
	})
}

func FuzzDecode(f *testing.F) {
	f.Add(Train([]Example{{Features: []uint32{1}, Label: 0}}, []string{"a", "b"}, Options{LogBuckets: 3, Epochs: 1, Rate: 0.1, Seed: 1}).Encode())
	f.Add([]byte("DVLM"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		out := make([]float64, len(m.Classes))
		m.Probs([]uint32{0, 1, 2, m.Buckets() - 1, m.Buckets() + 5}, out)
	})
}
