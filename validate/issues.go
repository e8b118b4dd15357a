package validate

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// Bounded error work. A request can be built to fail a rule millions of
// times: 4 MiB of empty items `[{},{},...]` under a schema that requires
// two fields is 2.8 million issues. Reporting them all once cost 9.8 s of
// CPU, 1.3 GB of memory and a 205 MB response. fx therefore asks for at
// most a fixed number of issues (fx.Config.MaxIssues) and a schema that
// implements Limited stops working once it has found them.
//
// The convention: ValidateLimit(v, max) returns at most max issues, and
// stops as soon as it has max of them. To learn whether more exist, the
// caller asks for one more than it will keep (fx asks for MaxIssues+1 and
// reports the list as truncated when it gets MaxIssues+1).
//
// Which issues are kept when there are more than max: the first ones in
// the schema's own order of work. For the built-in schemas (the builder
// and Struct) that order is the same on the tree path (Validate) and on
// the byte path (ValidateJSON): fields in sorted key order, then the
// unknown keys of a Strict object in sorted order, array elements by
// index. So both paths give the same Result, truncated or not.

// Limited is the optional interface of a Schema that can stop early.
// ValidateLimit is Validate that returns at most max issues (max <= 0: no
// limit) and stops doing the work once it has found max. With fewer than
// max issues its Result is the one Validate gives.
//
// fx calls ValidateLimit instead of Validate when a schema implements it;
// a Schema that does not is still bounded on the wire (fx truncates the
// list it returns) but not in the work it does. The built-in schemas,
// Struct and the adapters in validate/adapters implement it.
type Limited interface {
	Schema
	ValidateLimit(value any, max int) Result
}

// LimitedDecoder is the Decoder counterpart of Limited: ValidateJSONLimit
// is ValidateJSON with at most max issues, stopping at max. fx calls it
// under the same conditions as ValidateJSON.
type LimitedDecoder interface {
	Decoder
	ValidateJSONLimit(body []byte, max int) Result
}

// ValidateMax validates v with s, asking for at most max issues (max <= 0:
// all of them): through ValidateLimit when s implements Limited, else
// through Validate, whose list is then cut to max. A nested foreign
// schema in a builder schema is run this way.
func ValidateMax(s Schema, v any, max int) Result {
	if l, ok := s.(Limited); ok && max > 0 {
		return cut(l.ValidateLimit(v, max), max)
	}
	return cut(s.Validate(v), max)
}

// ValidateJSONMax is ValidateMax for the byte path of a Decoder.
func ValidateJSONMax(d Decoder, body []byte, max int) Result {
	if l, ok := d.(LimitedDecoder); ok && max > 0 {
		return cut(l.ValidateJSONLimit(body, max), max)
	}
	return cut(d.ValidateJSON(body), max)
}

// cut keeps the first max issues (a schema may return more than asked).
func cut(r Result, max int) Result {
	if max > 0 && len(r.Issues) > max {
		r.Issues = r.Issues[:max:max]
	}
	return r
}

// issueList collects issues and stops taking them at max (0: no limit):
// the builder's schemas and the type check of Struct (state) and the
// constraint plans (walker) report into it.
type issueList struct {
	issues []Issue
	max    int
}

// full reports whether the issue limit of this validation is reached: the
// loops of every built-in schema stop there (the work is bounded, not
// only the list).
func (l *issueList) full() bool { return l.max > 0 && len(l.issues) >= l.max }

// room is how many more issues may be added (0: no limit).
func (l *issueList) room() int {
	if l.max <= 0 {
		return 0
	}
	return l.max - len(l.issues)
}

// report adds the issue msg at path (nil: the value itself), unless the
// list is full.
func (l *issueList) report(path []string, msg string) {
	if l.full() {
		return
	}
	if path == nil {
		path = []string{}
	}
	l.issues = append(l.issues, Issue{Path: path, Message: msg})
}

// smallestKeys returns, sorted, the k smallest keys for which keep(key) is
// true among those yielded by each (k <= 0: all of them). It holds at most
// 2k keys at a time, so a Strict object with 330,000 unknown keys costs a
// pass over them and a few small sorts, not a slice and a sort of
// 330,000 strings.
func smallestKeys(each func(yield func(string) bool), k int) []string {
	var out []string
	each(func(key string) bool {
		out = append(out, key)
		if k > 0 && len(out) >= 2*k+16 {
			slices.Sort(out)
			clear(out[k:])
			out = out[:k]
		}
		return true
	})
	slices.Sort(out)
	if k > 0 && len(out) > k {
		out = out[:k]
	}
	return out
}

// state carries the issues and the current path through one validation.
type state struct {
	issueList // stops at max issues (0: no limit)
	path      []string
	query     bool
	err       error
}

// newState starts a validation stopping at max issues.
func newState(query bool, max int) *state {
	return &state{issueList: issueList{max: max}, query: query}
}

// add reports msg at the current path.
func (st *state) add(msg string) {
	if !st.full() {
		st.report(slices.Clone(st.path), msg)
	}
}

func (st *state) push(seg string) { st.path = append(st.path, seg) }

func (st *state) pop() { st.path = st.path[:len(st.path)-1] }

// kindOf names the JSON kind of a value, for messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, float32, int, int64, int32, uint, uint64, uint32, json.Number:
		return "a number"
	case []any, []string:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a value of another kind"
}

// quoteInput quotes a client-supplied value for a message, shortened.
func quoteInput(s string) string {
	if len(s) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// fractionIssue words why an integer kind (a struct field's, an Integer)
// refuses f, a number with a fraction.
func fractionIssue(f float64) string { return "Expected an integer, got " + fmtNum(f) }

// rangeIssue words why a number f is outside [lo, hi] ("" when it is
// inside): "Must be at least lo" below, "Must be at most hi" above, the
// bound it crossed as the document gives it (minimum, maximum) and as a
// min or max tag words it. Every integer range (a Go integer type's, an
// Integer schema's ±2^53, a Min or Max) is worded here.
func rangeIssue(f, lo, hi float64) string {
	switch {
	case f < lo:
		return "Must be at least " + fmtNum(lo)
	case f > hi:
		return "Must be at most " + fmtNum(hi)
	}
	return ""
}

// fmtNum renders a number as a person writes it: 100, 2.5, 9007199254740992, 1e+300.
func fmtNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func jsonErrorResult(err error) Result { return Result{Issues: []Issue{jsonIssueOf(err)}} }

// jsonIssueOf is the issue of a CheckJSON error.
func jsonIssueOf(err error) Issue {
	if je, ok := err.(*JSONError); ok {
		return je.Issue()
	}
	return Issue{Path: []string{}, Message: err.Error()}
}

func nonNil(p []string) []string {
	if p == nil {
		return []string{}
	}
	return p
}

// decodeIssue translates a decoder error that the type check did not
// foresee (a custom UnmarshalJSON rejecting its input).
func decodeIssue(err error) Issue {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return Issue{Path: strings.Split(te.Field, "."), Message: "Has an invalid value"}
	}
	return Issue{Path: []string{}, Message: "Has an invalid value"}
}
