package explain

// matcher finds every needle in one pass over the input (Aho–Corasick as a
// dense DFA over a reduced alphabet), ignoring ASCII case: frameworks and
// the people who paste their errors spell the same message "CUDA error",
// "Cuda error" and "cuda error", "No CUDA GPUs" and "NO CUDA GPUs". One pass costs about a nanosecond a
// byte whatever the number of needles, where a substring search per needle
// would read a 10 MB log a hundred times.
type matcher struct {
	class  [256]uint8 // byte -> alphabet class; 0 is "no needle has it"
	nclass int
	// delta[state*nclass + class] is the next state, with outputBit set
	// when needles end there: the scan reads out only then, so the hot
	// loop touches the transition table alone.
	delta    []uint16
	out      [][]int32 // state -> needles ending here (incl. via suffix links)
	needleLn []int
}

func newMatcher(needles [][]byte) *matcher {
	m := &matcher{}
	folded := make([][]byte, len(needles))
	for i, n := range needles {
		folded[i] = lowerASCII(n)
		for _, c := range folded[i] {
			if m.class[c] == 0 {
				m.nclass++
				m.class[c] = uint8(m.nclass)
				if c >= 'a' && c <= 'z' {
					m.class[c-'a'+'A'] = m.class[c]
				}
			}
		}
		m.needleLn = append(m.needleLn, len(n))
	}
	needles = folded
	m.nclass++ // class 0 included
	nc := m.nclass
	// Trie, built straight into the transition table: delta[s*nc+k] is the
	// child of s on class k, 0 for none (no child is the root). Slices, not
	// maps, keep building the automaton well under a millisecond, which
	// `doctor --log` pays on every run.
	total := 1
	for _, n := range needles {
		total += len(n)
	}
	if total >= outputBit {
		panic("explain: the needles need more automaton states than a uint16 holds beside its output bit")
	}
	m.delta = make([]uint16, nc, nc*total)
	outs := make([][]int32, 1, total)
	states := 1
	for i, n := range needles {
		s := 0
		for _, c := range n {
			k := int(m.class[c])
			nx := m.delta[s*nc+k]
			if nx == 0 {
				nx = uint16(states)
				states++
				m.delta = m.delta[:len(m.delta)+nc]
				outs = append(outs, nil)
				m.delta[s*nc+k] = nx
			}
			s = int(nx)
		}
		outs[s] = append(outs[s], int32(i))
	}
	// Breadth-first: suffix links, outputs through them, and the missing
	// transitions filled from the suffix link's.
	fail := make([]uint16, states)
	m.out = make([][]int32, states)
	m.out[0] = outs[0]
	queue := make([]uint16, 0, states)
	for k := 0; k < nc; k++ {
		if nx := m.delta[k]; nx != 0 {
			fail[nx] = 0
			queue = append(queue, nx)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := fail[s]
		if len(outs[s]) > 0 || len(m.out[f]) > 0 {
			m.out[s] = append(append([]int32(nil), outs[s]...), m.out[f]...)
		}
		for k := 0; k < nc; k++ {
			if nx := m.delta[int(s)*nc+k]; nx != 0 {
				fail[nx] = m.delta[int(f)*nc+k]
				queue = append(queue, nx)
			} else {
				m.delta[int(s)*nc+k] = m.delta[int(f)*nc+k]
			}
		}
	}
	for i, nx := range m.delta {
		if m.out[nx] != nil {
			m.delta[i] = nx | outputBit
		}
	}
	return m
}

// outputBit marks a transition into a state where needles end.
const outputBit = 1 << 15

// each calls fn(needle, offset) for every occurrence, in input order of
// their end.
func (m *matcher) each(b []byte, fn func(needle, off int)) {
	s := uint16(0)
	nc := m.nclass
	for i, c := range b {
		s = m.delta[int(s)*nc+int(m.class[c])]
		if s&outputBit != 0 {
			s &^= outputBit
			for _, n := range m.out[s] {
				fn(int(n), i+1-m.needleLn[n])
			}
		}
	}
}

// lowerASCII returns b with ASCII letters lowered (a new slice).
func lowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}
