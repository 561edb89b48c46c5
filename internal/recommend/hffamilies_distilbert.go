package recommend

import "github.com/devctl/devctl/internal/oomsim"

// countDistilBERT counts DistilBertModel: BERT's encoder at half the depth
// under its own names (dim, n_layers, n_heads, hidden_dim): word and
// learned position embeddings with a LayerNorm, then blocks of q, k, v and
// an output projection with biases, a LayerNorm, a two-Linear MLP with
// biases and a LayerNorm; no token types and no pooler. A task head (the
// masked-LM transform, a classifier) is not counted. distilbert-base-uncased
// counts 66,362,880.
func countDistilBERT(c hfConfig) (oomsim.Model, error) {
	var f fields
	h := f.need("dim", c.Dim)
	L := f.need("n_layers", c.NLayers)
	nh := f.need("n_heads", c.NHeads)
	ffn := f.need("hidden_dim", c.HiddenDim)
	V := f.need("vocab_size", c.VocabSize)
	P := f.opt("max_position_embeddings", c.MaxPositionEmbeddings, 512)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := headsFit(nh, h, "n_heads", "dim"); err != nil {
		return oomsim.Model{}, err
	}
	if err := tooMany(L, h, 4*h+2*ffn); err != nil {
		return oomsim.Model{}, err
	}
	linear := 4*h*h + 2*h*ffn
	var m oomsim.Model
	m.Params = V*h + P*h + 2*h + L*(linear+4*h+2*h+ffn+h+2*h)
	m.UnquantizedParams = m.Params - L*linear
	m.BufferBytes = P * 8 // int64 position_ids
	m.Arch = &oomsim.Arch{Layers: int(L), Hidden: int(h), Heads: int(nh), KVHeads: int(nh), HeadDim: int(h / nh),
		FFN: int(ffn), Vocab: int(V), MaxPositions: int(P)}
	return m, nil
}
