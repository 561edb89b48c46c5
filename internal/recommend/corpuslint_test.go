package recommend

import (
	"regexp"
	"strconv"
	"testing"
)

// idCPUMoE is a llama.cpp --n-cpu-moe value written in a corpus row's id
// (-ncmoe26-, -ncm26-).
var idCPUMoE = regexp.MustCompile(`-ncm(?:oe)?(\d+)(?:-|$)`)

// TestCorpusNotesStateTheirOwnCPUMoE guards the harness's reading of
// --n-cpu-moe (cpuMoE: the first value in a row's note): a row whose id
// names its value must plan with it. Collectors quote a sweep's shared
// launch command in every row's note, whose value is another row's; rounds
// 103 and 105 planned whole sweeps at one value that way until the notes
// were reworded.
func TestCorpusNotesStateTheirOwnCPUMoE(t *testing.T) {
	checked := 0
	for _, table := range []string{"measured.tsv", "outcomes.tsv"} {
		for _, r := range readTSV(t, table) {
			m := idCPUMoE.FindStringSubmatch(r["id"])
			if m == nil || r["stack"] != "llama.cpp" {
				continue
			}
			checked++
			want, _ := strconv.Atoi(m[1])
			if got := cpuMoE(r["note"]); got != want {
				t.Errorf("%s %s: the note's first --n-cpu-moe is %d, the id's %d: bracket the other rows' values in quoted commands", table, r["id"], got, want)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no llama.cpp row names its --n-cpu-moe in its id: the check reads nothing")
	}
}
