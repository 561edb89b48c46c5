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
// optional confirming regexp. All needles are found in one pass over the log
// (an Aho–Corasick automaton that ignores ASCII case, no per-line regexp).
// Rules generalise beyond one framework's wording: error codes are mapped
// to meaning (codes.go: CUDA runtime numbers, hipError names and numbers,
// Intel Unified Runtime results, NVIDIA Xid numbers, cuDNN and NCCL
// statuses, XLA status words), concepts are recognised in anyone's words
// ("out of memory" with the device named on the line, a bare "Killed",
// "Expected object of backend CUDA"), and messages that follow another
// failure (a collective watchdog, NCCL's "unhandled cuda error") yield to
// the first device error. Each hit is scored by its
// rule's weight, by the shape of its line (an exception line such as
// "RuntimeError: ..." gains, a warning such as "UserWarning: ..." loses) and
// by its position (later wins ties: the last traceback's final line is the
// primary error). The best-scoring hit wins; no hit means CategoryUnknown.
// Regexps and the automaton are built once, on first use (sync.Once), so
// devctl's start-up pays nothing for them. Work and memory are bounded: one
// pass over the input, at most a few hits kept per rule, lines followed at
// most 4 KiB each way and each needle's line read once however many times
// the needle repeats on it, so the work is linear in the log's size even for
// one 16 MB line dense with one message.
//
// Messages are data (messages_en.go, messages_pl.go) in an i18n.Catalog; the
// doctor command registers its own check messages in a catalogue of the same
// type (see package i18n).
//
// The corpus under testdata/logs holds real error excerpts from public issue
// trackers with the expected answer for each; corpus_test.go measures the
// classifier's accuracy on it and prints the confusion table.
package explain
