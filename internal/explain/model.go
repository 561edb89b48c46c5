package explain

import (
	"bytes"
	_ "embed"
	"math"
	"sync"

	"github.com/devctl/devctl/internal/explain/learn"
)

// The learned fallback: where no rule and no catalogue entry recognised a
// device error, a linear model over the words and character runs of the
// log's error lines (package learn) names a category, if it is confident
// enough, and says unknown otherwise. It is trained on the corpus
// (testdata/logs) by `go generate` and embedded as int8 weights; nothing is
// trained or parsed at run time beyond a header, and only `doctor --log`
// (the first classification) touches it.

//go:generate go test . -run TestEmbeddedModelUpToDate -update

//go:embed model.bin
var modelBytes []byte

// embeddedModel is the model devctl ships, decoded on first use.
var embeddedModel = sync.OnceValue(func() *learn.Compact {
	m, err := learn.Decode(modelBytes)
	if err != nil {
		return nil // a build without a model classifies by rules alone
	}
	return m
})

// modelThreshold is the probability of a device error (one minus the
// model's probability of unknown) at or above which the model answers; below
// it the answer is unknown. It was read from the table TestLOSO prints (the
// logs no rule recognised, each scored by a model trained without its
// source): the lowest threshold at which the model gave no unknown-labelled
// log a device category. The model is trained on a corpus where nine logs in
// ten are device errors but is asked only about logs no rule recognised, two
// thirds of which are not, hence a threshold this high.
const modelThreshold = 0.925

// modelGuess is the model's most probable device category for a log and
// the probability that the log shows a device error at all (one minus
// unknown's), with the window it read. Summing the device categories'
// probabilities, rather than taking the top one's, is what lets a log whose
// words point to a device failure without saying which kind still count.
func modelGuess(log []byte, m *learn.Compact) (window []byte, best int, p float64) {
	window = modelWindow(log)
	feats := learn.DocFeatures(window, m.Buckets(), make([]uint32, 0, 512))
	probs := make([]float64, len(m.Classes))
	m.Probs(feats, probs)
	best = -1
	p = 1
	for c := range probs {
		if m.Classes[c] == string(CategoryUnknown) {
			p -= probs[c]
			continue
		}
		if best < 0 || probs[c] > probs[best] {
			best = c
		}
	}
	return window, best, p
}

// modelWindow is the text the model reads from a log (learn.Window)
// without the lines that only mention an error as advice ("If you get
// `CUDA error: invalid device function` errors, ..."), which the rules skip
// too. Training reads the corpus through it as well.
func modelWindow(log []byte) []byte {
	w := learn.Window(log)
	var out []byte
	for s := 0; s < len(w); {
		e := bytes.IndexByte(w[s:], '\n')
		if e < 0 {
			e = len(w) - s
		}
		line := w[s : s+e]
		if !advice(line) {
			out = append(append(out, line...), '\n')
		}
		s += e + 1
	}
	return out
}

func advice(line []byte) bool {
	for _, h := range hypothetical {
		if bytes.Contains(line, h) {
			return true
		}
	}
	return false
}

// failureCues are the words without which a log reports no failure at all;
// the model answers only for a log that has one ("INFO: model and data are
// on the same device" is not a device mismatch).
var failureCues = [][]byte{[]byte("error"), []byte("fail"), []byte("exception"), []byte("fatal"), []byte("abort"),
	[]byte("killed"), []byte("assert"), []byte("traceback"), []byte("cannot"), []byte("can't"), []byte("unable"),
	[]byte("not "), []byte("segmentation"), []byte("core dumped"), []byte("hang"), []byte("timeout"), []byte("timed out"),
	[]byte("false"), []byte("ran out"), []byte("out of"), []byte("crash"), []byte("problem"), []byte("wrong")}

func hasFailureCue(window []byte) bool {
	low := bytes.ToLower(window)
	for _, c := range failureCues {
		if bytes.Contains(low, c) {
			return true
		}
	}
	return false
}

// modelDecide asks the model about a log no rule or catalogue recognised.
func modelDecide(log []byte, m *learn.Compact) (Explanation, bool) {
	if m == nil {
		return Explanation{}, false
	}
	window, best, p := modelGuess(log, m)
	if !hasFailureCue(window) {
		return Explanation{}, false
	}
	if best < 0 || p < modelThreshold {
		return Explanation{}, false
	}
	cat := Category(m.Classes[best])
	line, start := modelEvidence(window, m, best)
	e := Explanation{Category: cat, Device: categoryDevice(cat), DecidedBy: DecidedByModel, Rule: "model",
		Confidence: math.Round(p*100) / 100}
	if e.Device == "" {
		e.Device = inferDevice(string(line))
	}
	if e.Device == DeviceAny {
		e.Device = inferDevice(string(window))
	}
	if len(line) > 0 {
		if i := bytes.Index(log, line); i >= 0 {
			start = i
		} else {
			start = -1
		}
		e.Evidence = []string{quote(log, hit{start: max(start, 0), end: max(start, 0) + len(line), off: max(start, 0)})}
		if start < 0 {
			e.Evidence = []string{cleanUTF8(string(bytes.TrimSpace(line)))}
		} else {
			e.Line = 1 + bytes.Count(log[:start], []byte{'\n'})
		}
	}
	e.MessageID = codeMessage(&codeEntry{}, cat, e.Device)
	return e, true
}

// categoryDevice is the device a category implies by itself ("" when it
// implies none).
func categoryDevice(c Category) Device {
	switch c {
	case CategoryMPSPlaceholderStorage, CategoryMPSUnsupportedOp:
		return DeviceMPS
	case CategoryXLAResourceExhausted, CategoryXLATPUInit:
		return DeviceXLA
	case CategoryROCmHIPError:
		return DeviceROCm
	case CategoryCUDADriverMismatch, CategoryCUDALaunchFailure, CategoryCUDNNError, CategoryNCCLError:
		return DeviceCUDA
	}
	return ""
}

// modelEvidence picks the line of the window that speaks most for class c:
// the largest margin of c's score over the best other class, scored line by
// line.
func modelEvidence(window []byte, m *learn.Compact, c int) ([]byte, int) {
	var (
		best      []byte
		bestStart int
		bestScore = math.Inf(-1)
		scores    = make([]float64, len(m.Classes))
		feats     = make([]uint32, 0, 256)
	)
	for start := 0; start < len(window); {
		end := bytes.IndexByte(window[start:], '\n')
		if end < 0 {
			end = len(window)
		} else {
			end += start
		}
		line := window[start:end]
		if len(bytes.TrimSpace(line)) > 0 {
			feats = learn.DocFeatures(line, m.Buckets(), feats[:0])
			m.Scores(feats, scores)
			other := math.Inf(-1)
			for k, s := range scores {
				if k != c {
					other = math.Max(other, s)
				}
			}
			if s := scores[c] - other; s > bestScore {
				best, bestStart, bestScore = line, start, s
			}
		}
		start = end + 1
	}
	return best, bestStart
}
