package validate

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"
)

// passesDoc holds the typed endpoint's line (benchTypedLine) at every
// level a plan reaches: a slice, a pointer, an array; and a map.
type passesDoc struct {
	Name  string            `json:"name" validate:"required,max=8"`
	Email string            `json:"email" validate:"omitempty,email"`
	Lines []benchTypedLine  `json:"lines" validate:"required,min=1,max=3,dive"`
	Ptr   *benchTypedLine   `json:"ptr"`
	Arr   [2]benchTypedLine `json:"arr"`
	Tags  map[string]string `json:"tags" validate:"dive,keys,min=2,endkeys,max=3"`
}

// passes, the walk-free check of a value, says "no issue" exactly when
// the walker finds none, over random values that pass and fail at every
// level (fields, slice and array elements, a pointer, a map).
func TestPassesAgreesWithTheWalk(t *testing.T) {
	plan, err := planOf(reflect.TypeFor[passesDoc]())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	line := func() benchTypedLine {
		return benchTypedLine{SKU: pick("", "ab", "abc", "a!c", "A100"), Qty: r.IntN(103) - 1}
	}
	for round := 0; round < 5000; round++ {
		d := passesDoc{Name: pick("", "ada", "much too long"), Email: pick("", "a@b.co", "nope")}
		for n := r.IntN(5); n > 0; n-- {
			d.Lines = append(d.Lines, line())
		}
		if r.IntN(2) == 0 {
			l := line()
			d.Ptr = &l
		}
		d.Arr = [2]benchTypedLine{line(), line()}
		if r.IntN(3) == 0 {
			d.Tags = map[string]string{pick("a", "ab"): pick("x", "xxxx")}
		}
		issues := plan.run(unsafe.Pointer(&d), nil, 0, nil)
		if got := plan.passes(unsafe.Pointer(&d)); got && len(issues) > 0 {
			t.Fatalf("passes, but the walk found %v in %+v", issues, d)
		} else if !got && len(issues) == 0 && d.Tags == nil {
			t.Fatalf("does not pass, but the walk found nothing in %+v", d)
		}
	}
}
