package validate

import "slices"

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

// issueList is the one issue collector of the package: the builder's
// schemas, the type check of Struct (state) and the constraint plans
// (walker) all report into one, which stops taking issues at max (0: no
// limit).
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
