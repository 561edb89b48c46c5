package oomsim

import (
	"math"
	"testing"
)

// A bare count equal to a published model gets that model's shape back
// (within rounding), so the guess is anchored on real architectures.
func TestAssumeArchReproducesReferences(t *testing.T) {
	for _, r := range RefShapes {
		a := AssumeArch(r.Params)
		if a.Hidden != r.Hidden || a.Layers != r.Layers {
			t.Errorf("%s (%d params): got %d layers × %d, want %d × %d", r.Name, r.Params, a.Layers, a.Hidden, r.Layers, r.Hidden)
		}
		n := shapeParams(r.Layers, r.Hidden, r.Heads, r.KVHeads, r.HeadDim, r.FFN, r.Vocab, r.Gated, r.Tied)
		if math.Abs(n-float64(r.Params))/float64(r.Params) > 0.015 {
			t.Errorf("%s: the reference shape counts %.0f, published %d", r.Name, n, r.Params)
		}
	}
}

// The case: 7B must look like a 7B, not 52 × 3328 with 52 heads.
func TestAssumeArchSevenB(t *testing.T) {
	a, note := AssumeArchNote(7_000_000_000)
	if a.Layers < 28 || a.Layers > 36 || a.Hidden < 3584 || a.Hidden > 4352 || a.HeadDim < 112 {
		t.Fatalf("7B shape %+v", a)
	}
	if !a.Assumed || note == "" {
		t.Fatal("an assumed shape must say so")
	}
}

// Monotone: more parameters never shrink the shape's total.
func TestAssumeArchMonotoneWidth(t *testing.T) {
	prev := 0.0
	for p := int64(50e6); p < 400e9; p = p * 11 / 10 {
		a := AssumeArch(p)
		n := float64(a.Layers) * float64(a.Hidden) * float64(a.Hidden)
		if n < prev*0.8 {
			t.Fatalf("at %d params the shape shrank: %+v", p, a)
		}
		prev = n
	}
}
