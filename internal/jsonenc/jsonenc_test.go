package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// reference is encoding/json's encoding of v with HTML escaping off.
func reference(t *testing.T, v any) ([]byte, error) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\"\\", "\b\f\n\r\t\x00\x1f\x7f", "\xff", "a\xc3", "\u2028\u2029", "zażółć 日本 🚀", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := reference(t, s)
		if got := AppendString([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("%q: got %s, want %s", s, got[1:], want)
		}
	})
}

func FuzzAppendFloat(f *testing.F) {
	for _, x := range []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, 3.4e38} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		want, werr := reference(t, x)
		got, err := AppendFloat(nil, x, 64)
		if (err != nil) != (werr != nil) || err == nil && !bytes.Equal(got, want) {
			t.Fatalf("float64 %v: got %s (%v), want %s (%v)", x, got, err, want, werr)
		}
		x32 := float32(x)
		want, werr = reference(t, x32)
		got, err = AppendFloat(nil, float64(x32), 32)
		if (err != nil) != (werr != nil) || err == nil && !bytes.Equal(got, want) {
			t.Fatalf("float32 %v: got %s (%v), want %s (%v)", x32, got, err, want, werr)
		}
	})
}

func TestAppendFloatRefusesNaNAndInfinities(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := AppendFloat(nil, x, 64); err == nil {
			t.Errorf("%v: no error", x)
		}
	}
}

func TestAppendMap(t *testing.T) {
	for _, m := range []map[string]any{
		nil,
		{},
		{"b": 1, "a": "x<y", "c": []string{"z"}, "d": nil, "é": map[string]any{"k": 2.5}},
	} {
		want, _ := reference(t, m)
		got, err := AppendMap(nil, m)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%v: got %s (%v), want %s", m, got, err, want)
		}
	}
	if _, err := AppendMap(nil, map[string]any{"x": math.NaN()}); err == nil {
		t.Error("NaN value encoded")
	}
}

func TestComma(t *testing.T) {
	for in, want := range map[string]string{"": "", "{": "{", `{"a":1`: `{"a":1,`, `{"a":{}`: `{"a":{},`} {
		if got := string(Comma([]byte(in))); got != want {
			t.Errorf("Comma(%q) = %q, want %q", in, got, want)
		}
	}
}
