package explain

// matcher finds every needle in one pass over the input (Aho–Corasick as a
// dense DFA over a reduced alphabet), ignoring ASCII case: frameworks and
// the people who paste their errors spell the same message "CUDA error",
// "Cuda error" and "cuda error", "No CUDA GPUs" and "NO CUDA GPUs". One pass costs about a nanosecond a
// byte whatever the number of needles, where a substring search per needle
// would read a 10 MB log a hundred times.
type matcher struct {
	class    [256]uint8 // byte -> alphabet class; 0 is "no needle has it"
	nclass   int
	delta    []uint32  // state*nclass + class -> next state
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
	// Trie.
	type node struct {
		next map[uint8]uint32
		fail uint32
		out  []int32
	}
	nodes := []node{{next: map[uint8]uint32{}}}
	for i, n := range needles {
		s := uint32(0)
		for _, c := range n {
			k := m.class[c]
			nx, ok := nodes[s].next[k]
			if !ok {
				nx = uint32(len(nodes))
				nodes = append(nodes, node{next: map[uint8]uint32{}})
				nodes[s].next[k] = nx
			}
			s = nx
		}
		nodes[s].out = append(nodes[s].out, int32(i))
	}
	// Breadth-first: suffix links and the full transition table.
	m.delta = make([]uint32, len(nodes)*m.nclass)
	m.out = make([][]int32, len(nodes))
	queue := make([]uint32, 0, len(nodes))
	for k := 0; k < m.nclass; k++ {
		if nx, ok := nodes[0].next[uint8(k)]; ok {
			m.delta[k] = nx
			nodes[nx].fail = 0
			queue = append(queue, nx)
		}
	}
	m.out[0] = nodes[0].out
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := nodes[s].fail
		m.out[s] = append(append([]int32(nil), nodes[s].out...), m.out[f]...)
		for k := 0; k < m.nclass; k++ {
			if nx, ok := nodes[s].next[uint8(k)]; ok {
				nodes[nx].fail = m.delta[int(f)*m.nclass+k]
				m.delta[int(s)*m.nclass+k] = nx
				queue = append(queue, nx)
			} else {
				m.delta[int(s)*m.nclass+k] = m.delta[int(f)*m.nclass+k]
			}
		}
	}
	return m
}

// each calls fn(needle, offset) for every occurrence, in input order of
// their end.
func (m *matcher) each(b []byte, fn func(needle, off int)) {
	s := uint32(0)
	nc := m.nclass
	for i, c := range b {
		s = m.delta[int(s)*nc+int(m.class[c])]
		if out := m.out[s]; out != nil {
			for _, n := range out {
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
