package explain

import "sort"

// matcher finds every needle in one pass over the input (Aho–Corasick over a
// reduced alphabet), ignoring ASCII case: frameworks and the people who
// paste their errors spell the same message "CUDA error", "Cuda error" and
// "cuda error", "No CUDA GPUs" and "NO CUDA GPUs". One pass costs about a
// nanosecond a byte whatever the number of needles, where a substring
// search per needle would read a 10 MB log a hundred times.
//
// The states near the root, where a scan of ordinary text spends nearly all
// its time, have a full row of transitions (a DFA); the deeper ones, reached
// only while the text spells the start of a needle, keep their trie
// children and follow suffix links to the nearest full row. `doctor --log`
// builds the automaton on every run, and full rows for the thousands of
// deep states were most of that cost.
type matcher struct {
	class  [256]uint8 // byte -> alphabet class; 0 is "no needle has it"
	nclass int
	// dense is how many states (the first, in breadth-first order) have a
	// full row: delta[state*nclass + class] is the next state.
	dense int
	delta []uint16
	// kids[kidStart[s]:kidStart[s+1]] are state s's trie children, each
	// class<<16 | child, sorted; fail[s] is its suffix link.
	kidStart []int32
	kids     []uint32
	fail     []uint16
	hasOut   []bool
	out      [][]int32 // state -> needles ending here (incl. via suffix links)
	needleLn []int
}

// denseDepth is the depth up to which states get a full row.
const denseDepth = 3

func newMatcher(needles [][]byte) *matcher {
	m := &matcher{}
	folded := make([][]byte, len(needles))
	var used [256]bool
	for i, n := range needles {
		folded[i] = lowerASCII(n)
		for _, c := range folded[i] {
			used[c] = true
		}
		m.needleLn = append(m.needleLn, len(n))
	}
	// Classes in byte order, so that children made in sorted needle order
	// come sorted by class.
	for c := 0; c < 256; c++ {
		if used[c] {
			m.nclass++
			m.class[c] = uint8(m.nclass)
			if c >= 'a' && c <= 'z' {
				m.class[c-'a'+'A'] = m.class[c]
			}
		}
	}
	m.nclass++ // class 0 included
	nc := m.nclass

	// The trie, built from the needles in sorted order without a map: a
	// needle shares with the one before it the states of their common
	// prefix (path), and adds one state per byte after it.
	idx := make([]int, len(folded))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return string(folded[idx[a]]) < string(folded[idx[b]]) })
	total := 1
	for _, n := range folded {
		total += len(n)
	}
	var (
		parent  = append(make([]uint16, 0, total), 0)
		byClass = append(make([]uint8, 0, total), 0)
		depth   = append(make([]uint8, 0, total), 0)
		outs    = append(make([][]int32, 0, total), nil)
		path    = []uint16{0}
		prev    []byte
	)
	for _, i := range idx {
		n := folded[i]
		lcp := 0
		for lcp < len(prev) && lcp < len(n) && prev[lcp] == n[lcp] {
			lcp++
		}
		path = path[:lcp+1]
		for _, c := range n[lcp:] {
			if len(parent) >= 1<<16-1 {
				panic("explain: the needles need more automaton states than a uint16 holds")
			}
			p := path[len(path)-1]
			parent = append(parent, p)
			byClass = append(byClass, m.class[c])
			depth = append(depth, depth[p]+min(1, 255-depth[p]))
			outs = append(outs, nil)
			path = append(path, uint16(len(parent)-1))
		}
		end := path[len(path)-1]
		outs[end] = append(outs[end], int32(i))
		prev = n
	}
	states := len(parent)
	// Children lists (a counting sort by parent keeps each list in class
	// order), then breadth-first numbering, so that the states with a
	// full row are the first ones.
	start := make([]int32, states+1)
	for s := 1; s < states; s++ {
		start[parent[s]+1]++
	}
	for s := 0; s < states; s++ {
		start[s+1] += start[s]
	}
	kidsOld := make([]uint16, states)
	fill := append([]int32(nil), start[:states]...)
	for s := 1; s < states; s++ {
		p := parent[s]
		kidsOld[fill[p]] = uint16(s)
		fill[p]++
	}
	order := make([]uint16, 1, states) // new number -> old
	newID := make([]uint16, states)
	for i := 0; i < len(order); i++ {
		o := order[i]
		for _, k := range kidsOld[start[o]:start[o+1]] {
			newID[k] = uint16(len(order))
			order = append(order, k)
		}
	}
	m.kidStart = make([]int32, states+1)
	m.kids = make([]uint32, 0, states)
	m.out = make([][]int32, states)
	for ns, old := range order {
		m.kidStart[ns] = int32(len(m.kids))
		for _, k := range kidsOld[start[old]:start[old+1]] {
			m.kids = append(m.kids, uint32(byClass[k])<<16|uint32(newID[k]))
		}
		if depth[old] <= denseDepth {
			m.dense = ns + 1
		}
	}
	m.kidStart[states] = int32(len(m.kids))

	// Suffix links and outputs, breadth first.
	m.fail = make([]uint16, states)
	m.hasOut = make([]bool, states)
	for ns := 0; ns < states; ns++ {
		own := outs[order[ns]]
		f := m.fail[ns]
		if ns == 0 {
			f = 0
		}
		if len(own) > 0 || (ns != 0 && len(m.out[f]) > 0) {
			m.out[ns] = append(append([]int32(nil), own...), m.out[f]...)
		}
		m.hasOut[ns] = m.out[ns] != nil
		for _, kc := range m.kids[m.kidStart[ns]:m.kidStart[ns+1]] {
			c, k := uint16(kc), uint16(kc>>16)
			if ns == 0 {
				m.fail[c] = 0
			} else {
				m.fail[c] = m.gotoSlow(f, k)
			}
		}
	}
	// Full rows: a state's own children, else its suffix link's row (a
	// shallower state, filled before it).
	m.delta = make([]uint16, m.dense*nc)
	for s := 0; s < m.dense; s++ {
		row := m.delta[s*nc : s*nc+nc]
		if s != 0 {
			f := int(m.fail[s])
			copy(row, m.delta[f*nc:f*nc+nc])
		}
		for _, kc := range m.kids[m.kidStart[s]:m.kidStart[s+1]] {
			row[kc>>16] = uint16(kc)
		}
	}
	return m
}

// child is s's trie child on class k, if any.
func (m *matcher) child(s int, k uint16) (uint16, bool) {
	for _, kc := range m.kids[m.kidStart[s]:m.kidStart[s+1]] {
		switch c := uint16(kc >> 16); {
		case c == k:
			return uint16(kc), true
		case c > k:
			return 0, false
		}
	}
	return 0, false
}

// gotoSlow is the transition from s on k by the trie and suffix links
// alone (used while the full rows are not built yet).
func (m *matcher) gotoSlow(s uint16, k uint16) uint16 {
	for {
		if c, ok := m.child(int(s), k); ok {
			return c
		}
		if s == 0 {
			return 0
		}
		s = m.fail[s]
	}
}

// step is the transition from a state without a full row: its child, or
// its suffix link's, until a state with a full row answers.
func (m *matcher) step(s int, k uint16) int {
	for s >= m.dense {
		if c, ok := m.child(s, k); ok {
			return int(c)
		}
		s = int(m.fail[s])
	}
	return int(m.delta[s*m.nclass+int(k)])
}

// each calls fn(needle, offset) for every occurrence, in input order of
// their end.
func (m *matcher) each(b []byte, fn func(needle, off int)) {
	s := 0
	nc := m.nclass
	dense := m.dense
	for i, c := range b {
		k := m.class[c]
		if s < dense {
			s = int(m.delta[s*nc+int(k)])
		} else {
			s = m.step(s, uint16(k))
		}
		if m.hasOut[s] {
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
