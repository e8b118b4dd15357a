package kittest_test

import (
	"slices"
	"testing"

	"github.com/fxhq/fx/internal/kittest"
)

// RecordTB keeps the failures instead of failing the test, Fatalf ends
// the body and only the body, and End runs the cleanups last first, all
// of them even when one calls Fatalf.
func TestRecordTB(t *testing.T) {
	rec := &kittest.RecordTB{TB: t}
	var ran []string
	rec.Run(func(tb testing.TB) {
		tb.Cleanup(func() { ran = append(ran, "first") })
		tb.Cleanup(func() {
			ran = append(ran, "second")
			tb.Fatalf("cleanup %d", 2)
		})
		tb.Cleanup(func() { ran = append(ran, "third") })
		tb.Errorf("error %d", 1)
		tb.Fatalf("fatal %d", 1)
		ran = append(ran, "after Fatalf")
	})
	if !rec.Failed() || !rec.Ended() || slices.Contains(ran, "after Fatalf") {
		t.Fatalf("after Run: Failed %v, Ended %v, ran %q", rec.Failed(), rec.Ended(), ran)
	}
	if len(ran) != 0 {
		t.Errorf("cleanups ran before End: %q", ran)
	}
	rec.End()
	if want := []string{"third", "second", "first"}; !slices.Equal(ran, want) {
		t.Errorf("End ran %q, want %q", ran, want)
	}
	if want := []string{"error 1", "fatal 1", "cleanup 2"}; !slices.Equal(rec.Errors(), want) {
		t.Errorf("Errors() = %q, want %q", rec.Errors(), want)
	}

	var quiet kittest.RecordTB
	quiet.Run(func(testing.TB) {})
	quiet.End()
	if quiet.Failed() || quiet.Ended() || len(quiet.Errors()) != 0 {
		t.Errorf("a body that reports nothing: Failed %v, Ended %v, %q", quiet.Failed(), quiet.Ended(), quiet.Errors())
	}
}
