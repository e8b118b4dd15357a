package fxtest

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Outcome is one declared response of a route: its method and pattern as
// registered, the status, and the error code ("" for a success).
type Outcome struct {
	Method, Path string
	Status       int
	Code         string
}

// String is "POST /orders 201" or "POST /orders 422 FX_VALIDATION_ERROR".
func (o Outcome) String() string {
	return o.Method + " " + o.Path + " " + outcomeString(o.Status, o.Code)
}

// outcomeString is "201" or "422 FX_VALIDATION_ERROR".
func outcomeString(status int, code string) string {
	if code == "" {
		return strconv.Itoa(status)
	}
	return strconv.Itoa(status) + " " + code
}

// compareOutcomes orders outcomeStrings by status, then code.
func compareOutcomes(a, b string) int {
	sa, ca, _ := strings.Cut(a, " ")
	sb, cb, _ := strings.Cut(b, " ")
	na, _ := strconv.Atoi(sa)
	nb, _ := strconv.Atoi(sb)
	return cmp.Or(cmp.Compare(na, nb), cmp.Compare(ca, cb))
}

// Coverage tells which declared responses the responses a strict client
// received exercised (see Client.Coverage and TotalCoverage). It counts
// the responses of the routes in the document (not hidden), leaving out
// the ones fx adds to every route of a kind (fx.DeclaredResponse.Generic:
// 500 FX_INTERNAL_ERROR, 431 FX_HEADERS_TOO_LARGE, 413
// FX_PAYLOAD_TOO_LARGE), which a suite is not expected to provoke on each
// route; HEAD responses are not counted.
type Coverage struct {
	Declared  int       // declared responses counted
	Exercised int       // of those, how many some response exercised
	Missed    []Outcome // the others, by method, path, status and code
}

// Full reports whether every declared response was exercised.
func (c Coverage) Full() bool { return len(c.Missed) == 0 }

// String is the report: "fxtest coverage: 5 of 8 declared responses
// exercised; not exercised:" and one missed Outcome a line.
func (c Coverage) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fxtest coverage: %d of %d declared responses exercised", c.Exercised, c.Declared)
	if len(c.Missed) > 0 {
		b.WriteString("; not exercised:")
		for _, o := range c.Missed {
			b.WriteString("\n\t" + o.String())
		}
	}
	return b.String()
}

// coverage tallies declared and exercised responses; every client's also
// feeds the process-wide one (total).
type coverage struct {
	mu        sync.Mutex
	declared  map[Outcome]bool
	exercised map[Outcome]bool
	parent    *coverage
}

// total is the coverage of every strict client of the test binary.
var total = &coverage{declared: map[Outcome]bool{}, exercised: map[Outcome]bool{}}

func newCoverage() *coverage {
	return &coverage{declared: map[Outcome]bool{}, exercised: map[Outcome]bool{}, parent: total}
}

// declare adds o to the declared responses unless it is generic.
func (c *coverage) declare(o Outcome, generic bool) {
	if generic {
		return
	}
	for ; c != nil; c = c.parent {
		c.mu.Lock()
		c.declared[o] = true
		c.mu.Unlock()
	}
}

// exercise records a response that matched the declared o.
func (c *coverage) exercise(o Outcome) {
	for ; c != nil; c = c.parent {
		c.mu.Lock()
		c.exercised[o] = true
		c.mu.Unlock()
	}
}

// report is the Coverage so far.
func (c *coverage) report() Coverage {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := Coverage{Declared: len(c.declared)}
	for o := range c.declared {
		if c.exercised[o] {
			r.Exercised++
		} else {
			r.Missed = append(r.Missed, o)
		}
	}
	slices.SortFunc(r.Missed, func(a, b Outcome) int {
		return cmp.Or(cmp.Compare(a.Method, b.Method), cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Status, b.Status), cmp.Compare(a.Code, b.Code))
	})
	return r
}

// Coverage returns which declared responses of the client's App the
// responses it received so far exercised (the zero Coverage when strict
// mode is off). Cost: a walk of the App's declared responses per call.
func (c *Client) Coverage() Coverage {
	if c.contract == nil {
		return Coverage{}
	}
	return c.contract.cov.report()
}

// TotalCoverage is Coverage over every strict client the test binary
// made so far, routes identified by method and pattern (the same route of
// Apps built by several tests is one route). Read it after the tests ran,
// from TestMain:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		if cov := fxtest.TotalCoverage(); !cov.Full() {
//			fmt.Println(cov)
//		}
//		os.Exit(code)
//	}
func TotalCoverage() Coverage { return total.report() }

// RequireFullCoverage fails the test at its end (t.Cleanup, t.Errorf with
// the Coverage report) when a declared response of the App was not
// exercised by this client, for a test that walks a whole contract. It
// needs strict mode: with strict mode off the test fails at New.
func RequireFullCoverage() Option { return func(o *options) { o.fullCoverage = true } }
