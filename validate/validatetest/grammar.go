package validatetest

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/fxhq/fx/validate"
)

// MalformedBodies returns bodies that validate.CheckJSON rejects, one of
// each fault: cut short inside an array and an object, a number with a
// leading zero, a duplicate key (plain and escaped: the issue names the
// key's path), a number beyond a float64, invalid UTF-8, a control
// character, data after the value, null spelt wrong or after a non-JSON
// space (a vertical tab, a no-break space), a byte-order mark and
// nesting deeper than validate.MaxDepth; then large bodies of each kind:
// one of 40,000 keys whose last repeats its first, and 40,000 objects
// cut short. A validate.GrammarChecker must answer each as fx would.
func MalformedBodies() [][]byte {
	bodies := []string{
		`[1,2`, `[`, `{"a":1`, `{"a":01}`, `{"a":1,"a":2}`, `{"a":{"b":1,"\u0062":2}}`,
		`{"a":1e400}`, "{\"a\":\"\xff\"}", "{\"a\":\"\x01\"}", `{"a":1} x`, `{}{}`, `nul`, `null x`,
		"\vnull", "\u00a0null", "\xef\xbb\xbf{}", `[{"a":1},]`, strings.Repeat("[", validate.MaxDepth+1),
	}
	var keys, items strings.Builder
	keys.WriteString(`{"a":1`)
	items.WriteString(`{"items":[`)
	for i := range 40_000 {
		fmt.Fprintf(&keys, `,"k%d":0`, i)
		items.WriteString(`{"a":1},`)
	}
	keys.WriteString(`,"k0":1}`)
	bodies = append(bodies, keys.String(), items.String()+`{"a":`)
	out := make([][]byte, len(bodies))
	for i, b := range bodies {
		out[i] = []byte(b)
	}
	return out
}

// CheckGrammar returns nil when d, a validate.GrammarChecker, answers
// each body as fx answers a body validate.CheckJSON rejects: ValidateJSON
// and ValidateJSONLimit (at the limits 1 and 100, when d is a
// validate.LimitedDecoder) return exactly one issue, the rejecting
// *validate.JSONError's (JSONError.Issue), and no value. Otherwise the
// error names the first body and call answered differently. A body
// CheckJSON accepts is an error too: the check is of malformed bodies.
//
// Cost: CheckJSON and the three validations per body; meant for tests.
func CheckGrammar(d validate.Decoder, bodies ...[]byte) error {
	if g, ok := d.(validate.GrammarChecker); !ok || !g.ChecksGrammar() {
		return fmt.Errorf("%T does not check the grammar itself (validate.GrammarChecker)", d)
	}
	for _, body := range bodies {
		err := validate.CheckJSON(body)
		if err == nil {
			return fmt.Errorf("%.40q: CheckJSON accepts it", body)
		}
		want := []validate.Issue{err.(*validate.JSONError).Issue()}
		calls := map[string]func() validate.Result{"ValidateJSON": func() validate.Result { return d.ValidateJSON(body) }}
		if l, ok := d.(validate.LimitedDecoder); ok {
			calls["ValidateJSONLimit(1)"] = func() validate.Result { return l.ValidateJSONLimit(body, 1) }
			calls["ValidateJSONLimit(100)"] = func() validate.Result { return l.ValidateJSONLimit(body, 100) }
		}
		for name, call := range calls {
			if res := call(); res.Value != nil || !reflect.DeepEqual(res.Issues, want) {
				return fmt.Errorf("%T.%s(%.40q) = %v %q, want the one issue %q", d, name, body, res.Value, res.Issues, want)
			}
		}
	}
	return nil
}

// Allocated returns the bytes f allocates (the runtime's TotalAlloc
// before and after it, after a collection; not timed): the measure of
// the tests that count how often a body is read whole, or that bound
// the memory a hostile body costs.
func Allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}
