package explain

import (
	"bytes"
	"flag"
	"os"
	"runtime"
	"testing"

	"github.com/devctl/devctl/internal/explain/learn"
)

var updateModel = flag.Bool("update", false, "retrain the embedded model (model.bin) from testdata/logs")

// trainEmbeddedModel trains the model devctl ships: every corpus log, with
// learn.DefaultOptions.
func trainEmbeddedModel(t testing.TB) []byte {
	docs := loadCorpus(t)
	return learn.Train(trainingExamples(docs, learn.DefaultOptions), modelClasses(), learn.DefaultOptions).Encode()
}

// TestEmbeddedModelUpToDate retrains the model from the corpus and compares
// it with model.bin; `go generate ./internal/explain` (this test with
// -update) rewrites it. Training is deterministic for a given math.Exp, so
// the bytes are compared on amd64 only, the architecture model.bin was made
// on; elsewhere the test checks that the embedded model loads.
func TestEmbeddedModelUpToDate(t *testing.T) {
	if *updateModel {
		if err := os.WriteFile("model.bin", trainEmbeddedModel(t), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	m := embeddedModel()
	if m == nil {
		t.Fatal("model.bin does not load; run go generate ./internal/explain")
	}
	if got, want := len(m.Classes), len(Categories()); got != want {
		t.Fatalf("the model has %d classes, want one per category (%d)", got, want)
	}
	for i, c := range Categories() {
		if m.Classes[i] != string(c) {
			t.Fatalf("model class %d is %q, want %q", i, m.Classes[i], c)
		}
	}
	if runtime.GOARCH != "amd64" || testing.Short() {
		return
	}
	if !bytes.Equal(trainEmbeddedModel(t), modelBytes) {
		t.Error("model.bin is not what the corpus trains; run go generate ./internal/explain")
	}
}

// TestModelAnswersOnlyWhenConfident checks the fallback's contract on logs
// the rules do not recognise: an unrelated failure stays unknown, and an
// answer the model gives says that the model decided, with its confidence.
func TestModelAnswersOnlyWhenConfident(t *testing.T) {
	for name, log := range map[string]string{
		"an import error":            "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    import yaml\nModuleNotFoundError: No module named 'yaml'\n",
		"a log reporting no failure": "INFO: model and data are on the same device (cuda:0)\n",
		"an error given as advice":   "If you get `CUDA error: invalid device function` errors, the above might be the cause\n",
	} {
		if e := Classify([]byte(log)); e.Category != CategoryUnknown || e.DecidedBy != DecidedByNone {
			t.Errorf("%s: got %s decided by %s (%.2f)", name, e.Category, e.DecidedBy, e.Confidence)
		}
	}
	for _, d := range loadCorpus(t) {
		e := Classify(d.log)
		if e.DecidedBy != DecidedByModel {
			continue
		}
		if e.Confidence < modelThreshold || e.Category == CategoryUnknown || e.Rule != "model" {
			t.Errorf("%s: the model answered %s with confidence %.2f (threshold %.3f)", d.file, e.Category, e.Confidence, modelThreshold)
		}
	}
}

// BenchmarkModelLoad is the model's cost on the first --log: decoding the
// embedded bytes (a header; the weights are read in place).
func BenchmarkModelLoad(b *testing.B) {
	for b.Loop() {
		if _, err := learn.Decode(modelBytes); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkModelPredict is one fallback prediction on a corpus log.
func BenchmarkModelPredict(b *testing.B) {
	log, err := os.ReadFile(corpusDir + "/no_gpu_found/1206-gemma-pytorch-47.log")
	if err != nil {
		b.Fatal(err)
	}
	m := embeddedModel()
	for b.Loop() {
		modelGuess(log, m)
	}
}
