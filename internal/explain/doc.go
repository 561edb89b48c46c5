// Package explain names what went wrong in a failed training or inference
// run from its log, so `devctl doctor --log` can answer in a second what
// otherwise takes an hour of searching issue trackers.
//
// The API is deliberately small and stable:
//
//	e := explain.Classify(logBytes)            // pure, fast, never panics
//	e, err := explain.ClassifyReader(r)        // same, reading at most MaxTail bytes of r's end
//	cat := explain.NewCatalog()                // English + Polish messages for every MessageID
//	msg := e.Message(cat, "pl")                // Title, Explanation, Fixes with numbers filled in
//
// Classify returns an Explanation: a Category (one of the Category
// constants), the Device the failure belongs to, up to three Evidence lines
// quoted from the log, the Numbers it could read (requested/total/free
// bytes, device index, driver and runtime versions, operator, dtype...;
// nil when absent), a MessageID into the message catalogue and a
// Confidence in [0,1].
//
// How it decides. Real logs are long and noisy, so the classifier is a table
// of rules (rules.go), each a category, a device, literal needles and an
// optional confirming regexp, and beside them the libraries' own error
// catalogues (catalogs/*.tsv, read by catalog.go): enum names, error numbers
// in the formats frameworks print them, the libraries' error strings after a
// framework's prefix (also another version's wording of them, by their
// words), and the frameworks' messages cut short by a tracker. All needles
// are found in one pass over the log (an Aho–Corasick automaton that
// ignores ASCII case, no per-line regexp). Rules generalise beyond one
// framework's wording: concepts are recognised in anyone's words ("out of
// memory" with the device named on the line, a bare "Killed", "Expected
// object of backend CUDA"), and a code printed on a line outranks a concept
// guessed from words on the same line. Each hit is scored by its rule's
// weight, by the shape of its line (an exception line such as
// "RuntimeError: ..." gains, a warning such as "UserWarning: ..." loses) and
// by its position (later wins ties: the last traceback's final line is the
// primary error). Then the root cause is put before what it triggered
// (rootcause.go): a collective's failure (NCCL errors, watchdog timeouts,
// DistBackendError) loses to any primary device error of another kind, on
// whatever rank; among collective failures the earliest wins; and on one
// rank a CUDA fault after an earlier CUDA error is that error's consequence.
//
// Where nothing matched, a learned fallback (model.go, package learn: a
// multinomial logistic regression over hashed word and character n-grams of
// the log's error lines, trained on the corpus by `go generate` and embedded
// as int8 weights) names a device category only when its probability of a
// device error reaches a threshold read from leave-one-source-out
// predictions; otherwise the answer is CategoryUnknown. Explanation.DecidedBy
// says which part decided: rule, catalogue, model or none.
//
// Regexps, the catalogues, the automaton and the model are built or decoded
// once, on first use (sync.Once), so devctl's start-up pays nothing for
// them. Work and memory are bounded: one pass over the input, at most a few
// hits kept per rule, lines followed at most 4 KiB each way and each
// needle's line read once however many times the needle repeats on it, the
// model reading at most 16 KiB of error lines from the last 256 KiB, so the
// work is linear in the log's size even for one 16 MB line dense with one
// message.
//
// Messages are data (messages_en.go, messages_pl.go) in an i18n.Catalog; the
// doctor command registers its own check messages in a catalogue of the same
// type (see package i18n).
//
// The corpus under testdata/logs holds real error excerpts from public issue
// trackers and pages with the expected answer for each; loso_test.go
// measures the classifier leave-one-source-out (`go test ./internal/explain
// -run LOSO -v`) and corpus_test.go keeps the rules' figures on the rounds
// they were written from.
package explain
