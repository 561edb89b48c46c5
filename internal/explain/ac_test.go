package explain

import (
	"bytes"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// naiveMatches is what matcher.each must report: every occurrence of every
// needle, ignoring ASCII case, as (needle, offset), sorted by end then needle.
func naiveMatches(needles [][]byte, text []byte) [][2]int {
	low := lowerASCII(text)
	var out [][2]int
	for i, n := range needles {
		ln := lowerASCII(n)
		for off := 0; off+len(ln) <= len(low); off++ {
			if bytes.Equal(low[off:off+len(ln)], ln) {
				out = append(out, [2]int{i, off})
			}
		}
	}
	sort.Slice(out, func(a, b int) bool {
		ea, eb := out[a][1]+len(needles[out[a][0]]), out[b][1]+len(needles[out[b][0]])
		if ea != eb {
			return ea < eb
		}
		return out[a][0] < out[b][0]
	})
	return out
}

func matcherMatches(m *matcher, needles [][]byte, text []byte) [][2]int {
	var out [][2]int
	m.each(text, func(n, off int) { out = append(out, [2]int{n, off}) })
	sort.SliceStable(out, func(a, b int) bool {
		ea, eb := out[a][1]+len(needles[out[a][0]]), out[b][1]+len(needles[out[b][0]])
		if ea != eb {
			return ea < eb
		}
		return out[a][0] < out[b][0]
	})
	return out
}

// Needles that share prefixes and suffixes, deep enough that the states
// past denseDepth (no full row) are exercised.
var acNeedles = [][]byte{[]byte("CUDA error"), []byte("cuda error: out of memory"), []byte("error"), []byte("out of memory"),
	[]byte("memory access"), []byte("an illegal memory access was encountered"), []byte("NCCL"), []byte("nccl error"),
	[]byte("cudaErrorMemoryAllocation"), []byte("ror: o"), []byte("a"), []byte("已杀死")}

func TestMatcherFindsWhatANaiveSearchFinds(t *testing.T) {
	m := newMatcher(acNeedles)
	for _, text := range []string{
		"RuntimeError: CUDA error: out of memory",
		"RuntimeError: CUDA error: an illegal memory access was encountered (cudaErrorMemoryAllocation)",
		"NCCL error NCCL nccl ERROR: OUT OF MEMORY 已杀死",
		"cuda errorcuda error: out of memorymemory access",
		"", "x",
	} {
		if diff := cmp.Diff(naiveMatches(acNeedles, []byte(text)), matcherMatches(m, acNeedles, []byte(text))); diff != "" {
			t.Errorf("%q (-naive +matcher):\n%s", text, diff)
		}
	}
}

func FuzzMatcher(f *testing.F) {
	f.Add([]byte("CUDA error: out of memory"))
	f.Add([]byte("an illegal memory access was encounteredNCCL"))
	m := newMatcher(acNeedles)
	f.Fuzz(func(t *testing.T, text []byte) {
		if diff := cmp.Diff(naiveMatches(acNeedles, text), matcherMatches(m, acNeedles, text)); diff != "" {
			t.Errorf("%q (-naive +matcher):\n%s", text, diff)
		}
	})
}
