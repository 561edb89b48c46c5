package host

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestOnceSharesOneAnswerPerHostAndKey(t *testing.T) {
	h1, h2 := &Host{}, &Host{}
	var calls atomic.Int32
	fn := func() (int, error) { return int(calls.Add(1)), nil }
	var wg sync.WaitGroup
	got := make([]int, 20)
	for i := range got {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			got[i], _ = Once(h1, "k", fn)
		}(i)
	}
	wg.Wait()
	for _, g := range got {
		if g != 1 {
			t.Fatalf("concurrent callers saw %v", got)
		}
	}
	if v, _ := Once(h2, "k", fn); v != 2 {
		t.Errorf("another host shared the answer: %d", v)
	}
	if v, _ := Once(h1, "other", fn); v != 3 {
		t.Errorf("another key shared the answer: %d", v)
	}
	boom := errors.New("boom")
	if _, err := Once(h1, "err", func() (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Errorf("error not returned: %v", err)
	}
}

func TestDoneNeverWaitsForARunningComputation(t *testing.T) {
	h := &Host{}
	if _, _, ok := Done[int](h, "k"); ok {
		t.Fatal("Done before anyone asked")
	}
	started, release := make(chan struct{}), make(chan struct{})
	go Once(h, "k", func() (int, error) { close(started); <-release; return 7, nil })
	<-started
	if _, _, ok := Done[int](h, "k"); ok {
		t.Fatal("Done while the computation runs")
	}
	close(release)
	if v, _ := Once(h, "k", func() (int, error) { return 0, nil }); v != 7 {
		t.Fatalf("Once = %d, want 7", v)
	}
	if v, err, ok := Done[int](h, "k"); !ok || err != nil || v != 7 {
		t.Fatalf("Done = %d, %v, %v; want 7, nil, true", v, err, ok)
	}
}
