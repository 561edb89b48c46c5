package learn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Example is one training document: its features (from Features) and the
// index of its class.
type Example struct {
	Features []uint32
	Label    int
	// Weight scales the example's pull on the model; 0 means 1.
	Weight float64
}

// Options are the training settings. The zero value is not usable; see
// DefaultOptions.
type Options struct {
	// LogBuckets is log2 of the number of feature buckets.
	LogBuckets uint8
	// Epochs is how many passes over the examples.
	Epochs int
	// Rate is the first step size; it decays as Rate/(1+epoch).
	Rate float64
	// L2 pulls the weights a step touches towards zero.
	L2 float64
	// Seed fixes the order examples are visited in.
	Seed uint64
}

// DefaultOptions are the settings the embedded model is trained with.
var DefaultOptions = Options{LogBuckets: 13, Epochs: 8, Rate: 0.5, L2: 1e-4, Seed: 1}

// Model is a trained multinomial logistic regression over hashed features,
// in float64, as training leaves it.
type Model struct {
	Classes    []string
	LogBuckets uint8
	Bias       []float64
	W          []float32 // bucket*len(Classes) + class
}

// Train fits a model to examples. It is deterministic: the order examples
// are visited in comes from opt.Seed, and every product is rounded before it
// is added (no fused multiply-add), so the result is the same wherever it
// runs with the same math.Exp.
func Train(examples []Example, classes []string, opt Options) *Model {
	nc := len(classes)
	buckets := 1 << opt.LogBuckets
	m := &Model{Classes: classes, LogBuckets: opt.LogBuckets, Bias: make([]float64, nc), W: make([]float32, buckets*nc)}
	order := make([]int, len(examples))
	for i := range order {
		order[i] = i
	}
	rng := opt.Seed*0x9E3779B97F4A7C15 + 1
	next := func() uint64 { // xorshift64*
		rng ^= rng >> 12
		rng ^= rng << 25
		rng ^= rng >> 27
		return rng * 2685821657736338717
	}
	score := make([]float64, nc)
	for ep := 0; ep < opt.Epochs; ep++ {
		for i := len(order) - 1; i > 0; i-- {
			j := int(next() % uint64(i+1))
			order[i], order[j] = order[j], order[i]
		}
		rate := opt.Rate / float64(1+ep)
		for _, k := range order {
			ex := examples[k]
			if len(ex.Features) == 0 {
				continue
			}
			v := 1 / math.Sqrt(float64(len(ex.Features)))
			m.scores(ex.Features, v, score)
			softmax(score)
			for c := 0; c < nc; c++ {
				g := score[c]
				if c == ex.Label {
					g -= 1
				}
				if math.Abs(g) < 1e-3 {
					continue // nothing to learn for this class here
				}
				if ex.Weight > 0 {
					g = float64(g * ex.Weight)
				}
				step := float64(rate * g)
				m.Bias[c] -= float64(step * 0.1)
				gv := float32(step * v)
				decay := float32(1 - rate*opt.L2)
				for _, f := range ex.Features {
					w := &m.W[int(f)*nc+c]
					*w = float32(*w*decay) - gv
				}
			}
		}
	}
	return m
}

// scores fills out with the raw class scores of a feature set whose
// features all weigh v.
func (m *Model) scores(feats []uint32, v float64, out []float64) {
	nc := len(m.Classes)
	copy(out, m.Bias)
	for _, f := range feats {
		row := m.W[int(f)*nc : int(f)*nc+nc]
		for c, w := range row {
			out[c] += float64(float64(w) * v)
		}
	}
}

// Probs fills out (len(Classes)) with the class probabilities of feats.
func (m *Model) Probs(feats []uint32, out []float64) {
	v := 0.0
	if len(feats) > 0 {
		v = 1 / math.Sqrt(float64(len(feats)))
	}
	m.scores(feats, v, out)
	softmax(out)
}

func softmax(s []float64) {
	hi := math.Inf(-1)
	for _, x := range s {
		hi = math.Max(hi, x)
	}
	sum := 0.0
	for i, x := range s {
		s[i] = math.Exp(x - hi)
		sum += s[i]
	}
	for i := range s {
		s[i] /= sum
	}
}

// Compact is a model with int8 weights read in place from its encoded
// bytes: loading it parses a header and copies nothing.
type Compact struct {
	Classes    []string
	logBuckets uint8
	scale      float64
	bias       []float64
	w          []byte // int8, bucket*len(Classes) + class
}

const magic = "DVLM"

// Encode quantises the model to int8 weights (one scale for all, the largest
// weight mapping to 127) and returns its bytes: "DVLM", a version byte, the
// class count, log2 of the buckets, the scale and the biases as float32
// little-endian, the class names (a length byte each), then the weights.
func (m *Model) Encode() []byte {
	nc := len(m.Classes)
	hi := 0.0
	for _, w := range m.W {
		hi = math.Max(hi, math.Abs(float64(w)))
	}
	scale := hi / 127
	if scale == 0 {
		scale = 1
	}
	b := []byte(magic)
	b = append(b, 1, byte(nc), m.LogBuckets)
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(scale)))
	for _, x := range m.Bias {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
	}
	for _, c := range m.Classes {
		b = append(b, byte(len(c)))
		b = append(b, c...)
	}
	for _, w := range m.W {
		q := math.Round(float64(w) / float64(float32(scale)))
		q = math.Max(-127, math.Min(127, q))
		b = append(b, byte(int8(q)))
	}
	return b
}

// Decode reads an encoded model. The weights stay in b.
func Decode(b []byte) (*Compact, error) {
	if len(b) < 12 || string(b[:4]) != magic {
		return nil, errors.New("learn: not a model")
	}
	if b[4] != 1 {
		return nil, fmt.Errorf("learn: model version %d, want 1", b[4])
	}
	nc, lb := int(b[5]), b[6]
	if nc == 0 || lb == 0 || lb > 24 {
		return nil, fmt.Errorf("learn: %d classes, 2^%d buckets", nc, lb)
	}
	m := &Compact{logBuckets: lb}
	m.scale = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[7:])))
	p := 11
	if len(b) < p+4*nc {
		return nil, errors.New("learn: model cut short")
	}
	for c := 0; c < nc; c++ {
		m.bias = append(m.bias, float64(math.Float32frombits(binary.LittleEndian.Uint32(b[p:]))))
		p += 4
	}
	for c := 0; c < nc; c++ {
		if p >= len(b) || p+1+int(b[p]) > len(b) {
			return nil, errors.New("learn: model cut short")
		}
		m.Classes = append(m.Classes, string(b[p+1:p+1+int(b[p])]))
		p += 1 + int(b[p])
	}
	if len(b)-p != (1<<lb)*nc {
		return nil, fmt.Errorf("learn: %d weight bytes, want %d", len(b)-p, (1<<lb)*nc)
	}
	m.w = b[p:]
	return m, nil
}

// Buckets is the number of feature buckets Features must reduce to.
func (m *Compact) Buckets() uint32 { return 1 << m.logBuckets }

// Probs fills out (len(Classes)) with the class probabilities of feats.
func (m *Compact) Probs(feats []uint32, out []float64) {
	m.Scores(feats, out)
	softmax(out)
}

// Scores fills out with the raw class scores of feats (before softmax).
func (m *Compact) Scores(feats []uint32, out []float64) {
	nc := len(m.Classes)
	v := 0.0
	if len(feats) > 0 {
		v = 1 / math.Sqrt(float64(len(feats)))
	}
	var acc [256]int32
	for _, f := range feats {
		if f >= m.Buckets() {
			continue
		}
		row := m.w[int(f)*nc : int(f)*nc+nc]
		for c, q := range row {
			acc[c] += int32(int8(q))
		}
	}
	for c := 0; c < nc; c++ {
		out[c] = m.bias[c] + float64(float64(acc[c])*m.scale)*v
	}
}
