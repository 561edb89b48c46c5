package explain

import (
	"bytes"
)

// cand is a hit whose rule decided what its line means.
type cand struct {
	hit
	cat Category
	dev Device
	msg string
}

// dropGuessesUnderCodes removes the concept rules' hits (a category
// guessed from words, such as "cudaMalloc failed" read as out of memory) on
// lines where an error catalogue read the code the library printed
// ("cudaMalloc failed: unknown error"): the code says what failed.
func dropGuessesUnderCodes(t *compiled, cs []cand) []cand {
	coded := map[int]bool{}
	for _, c := range cs {
		if t.rules[c.rule].origin == DecidedByCatalogue {
			coded[c.start] = true
		}
	}
	out := cs[:0]
	for _, c := range cs {
		if t.rules[c.rule].generic && coded[c.start] {
			continue
		}
		out = append(out, c)
	}
	return out
}

// Root cause over the last line. In a long or interleaved log the last
// error is often what an earlier one triggered: ranks whose peer died
// report NCCL errors, watchdog timeouts and DistBackendError; after a CUDA
// fault every later CUDA call on that process fails too. rootCause adjusts
// the scores so that
//
//   - a collective failure (NCCL errors, watchdog timeouts, the derived
//     rules) loses to any primary device error of another kind in the log,
//     whichever rank printed it and wherever: the collective failed because
//     a rank did;
//   - among collective failures alone, the earliest of the strongest wins
//     (the watchdog's timeout, not the DistBackendError it raises);
//   - on one rank, a CUDA launch failure or a CUDA error of no listed kind
//     that follows an earlier CUDA error (out of memory, a fault) is that
//     error's consequence, and the earlier one wins.
//
// A rank is read from the line's prefix (rankOf); a log without prefixes
// is one rank.
func rootCause(t *compiled, log []byte, cs []cand) {
	for i, c := range cs {
		if c.cat != CategoryNCCLError && ncclLine(log[c.start:c.end]) {
			// NCCL's own report of a failure is the collective's.
			cs[i].cat, cs[i].dev, cs[i].msg = CategoryNCCLError, DeviceCUDA, string(CategoryNCCLError)
		}
	}
	primary := false
	for _, c := range cs {
		if !collective(t, log, c) && isPrimary(t, c) {
			primary = true
			break
		}
	}
	for i := range cs {
		if !collective(t, log, cs[i]) {
			continue
		}
		if primary {
			cs[i].score -= penaltyDerived
			continue
		}
		// Earliest of the strongest first: the position bonus counts
		// from the end, by line (two rules on one line still tie), and an
		// exception line gains nothing (the DistBackendError a timeout
		// raises is an exception line; the timeout is not).
		kind := cs[i].kind
		if kind == kindException {
			kind = kindPlain
		}
		cs[i].score = score(t.rules[cs[i].rule].weight, kind, len(log)-cs[i].start, len(log))
	}
	ranks := map[int]string{}
	rankAt := func(start int) string {
		r, ok := ranks[start]
		if !ok {
			r = rankOf(log[start:min(len(log), start+120)])
			ranks[start] = r
		}
		return r
	}
	first := map[string]int{} // rank -> offset of its first CUDA error
	for _, c := range cs {
		if cudaError(c) && isPrimary(t, c) {
			r := rankAt(c.start)
			if o, ok := first[r]; !ok || c.off < o {
				first[r] = c.off
			}
		}
	}
	for i := range cs {
		c := cs[i]
		if !sticky(c) || !isPrimary(t, c) {
			continue
		}
		if o, ok := first[rankAt(c.start)]; ok && o < c.start {
			cs[i].score -= penaltyDerived
		}
	}
}

// collective reports whether a hit is a collective's failure, or marked as
// one that follows another failure. A CUDA failure NCCL reports in its own
// log line ("NCCL WARN Cuda failure 'misaligned address'") is the
// collective's failure too.
func collective(t *compiled, log []byte, c cand) bool {
	if c.cat == CategoryNCCLError || t.rules[c.rule].derived {
		return true
	}
	return ncclLine(log[c.start:c.end])
}

// ncclLine reports whether NCCL itself printed the line.
func ncclLine(line []byte) bool {
	return bytes.Contains(line, []byte("NCCL WARN")) || bytes.Contains(line, []byte("NCCL INFO"))
}

// isPrimary reports whether a hit can be a root cause: a device category
// from a rule of at least secondary weight, not on a warning line.
func isPrimary(t *compiled, c cand) bool {
	return t.rules[c.rule].weight >= wSecondary && c.kind != kindWarning && c.cat != CategoryUnknown
}

// cudaError is a CUDA failure that leaves the process's context broken or
// its memory short: what later CUDA errors on the same rank follow from.
func cudaError(c cand) bool {
	switch c.cat {
	case CategoryOutOfMemory, CategoryCUDALaunchFailure, CategoryOther, CategoryCUDNNError:
		return c.dev == DeviceCUDA
	}
	return false
}

// sticky is a CUDA failure that an earlier one on the same rank explains.
func sticky(c cand) bool {
	return c.dev == DeviceCUDA && (c.cat == CategoryCUDALaunchFailure || c.cat == CategoryOther)
}

// rankOf reads which process printed a line, from the prefixes launchers
// and libraries put there: "[rank3]:", "[default3]:", "(Worker pid=123)",
// "(EngineCore_DP0 pid=17374)", NCCL's "host:pid:tid [3]", OpenMPI's
// "[1,70]<stdout>:". A line without one gives "".
func rankOf(line []byte) string {
	s := bytes.TrimLeft(line, " \t>*`|")
	switch {
	case bytes.HasPrefix(s, []byte("[rank")), bytes.HasPrefix(s, []byte("[Rank")), bytes.HasPrefix(s, []byte("[default")):
		if j := bytes.IndexByte(s, ']'); j > 0 && j < 16 {
			return string(bytes.ToLower(bytes.ReplaceAll(s[1:j], []byte(" "), nil)))
		}
	case bytes.HasPrefix(s, []byte("(")):
		if j := bytes.IndexByte(s, ')'); j > 0 && j < 64 {
			if k := bytes.Index(s[:j], []byte("pid=")); k >= 0 {
				return "pid" + string(s[k+4:j])
			}
		}
	case len(s) > 0 && s[0] == '[':
		// OpenMPI: "[1,70]<stdout>:".
		if j := bytes.Index(s, []byte("]<std")); j > 0 && j < 16 {
			return "mpi" + string(s[1:j])
		}
	}
	// NCCL: "node17-2:36754:36754 [6] NCCL INFO ...": host and pid.
	if i := bytes.IndexByte(s, ' '); i > 0 && i < 64 {
		head := s[:i]
		if a := bytes.IndexByte(head, ':'); a > 0 {
			if b := bytes.IndexByte(head[a+1:], ':'); b > 0 && isDigits(head[a+1:a+1+b]) {
				return string(head[:a+1+b])
			}
		}
	}
	return ""
}
