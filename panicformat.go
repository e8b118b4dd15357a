package fx

import (
	"fmt"
	"reflect"
	"strings"
)

// Formatting panics for clients and logs: the panic value (formatValue,
// loggable, describe) and, in Development mode, its stack (stackFrames).
//
// Panic values are arbitrary: fmt (and so slog's text handlers) recurses
// forever on a map or slice that contains itself, which would crash the
// whole process with a stack overflow. Before a panic value is formatted
// or logged, printable checks it; one that is cyclic, or too large to
// check within a small budget, is shown by its type only.

// formatValue is fmt.Sprint(v), or a placeholder naming v's type when
// printing v is unsafe.
func formatValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case error:
		return v.Error()
	case fmt.Stringer:
		return v.String()
	}
	if !printable(v) {
		return fmt.Sprintf("(%T: cyclic or too large to print)", v)
	}
	return fmt.Sprint(v)
}

// loggable returns v for a log attribute, or formatValue's placeholder
// when formatting v is unsafe.
func loggable(v any) any {
	switch v.(type) {
	case nil, string, error, fmt.Stringer, bool, int, int64, uint64, float64:
		return v
	}
	if !printable(v) {
		return formatValue(v)
	}
	return v
}

// printable reports whether fmt can print v in bounded time: no map or
// slice of v contains itself, and v has at most a few thousand elements.
// Like fmt, it follows a pointer only at the top level.
func printable(v any) bool {
	w := cycleWalker{onPath: map[uintptr]bool{}, budget: 4096}
	return w.walk(reflect.ValueOf(v), 0)
}

type cycleWalker struct {
	onPath map[uintptr]bool
	budget int
}

func (w *cycleWalker) walk(v reflect.Value, depth int) bool {
	if w.budget--; w.budget < 0 {
		return false
	}
	switch v.Kind() {
	case reflect.Interface:
		return v.IsNil() || w.walk(v.Elem(), depth+1)
	case reflect.Pointer:
		return depth > 0 || v.IsNil() || w.walk(v.Elem(), depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			if !w.walk(v.Field(i), depth+1) {
				return false
			}
		}
	case reflect.Map, reflect.Slice, reflect.Array:
		if v.Kind() != reflect.Array {
			if v.IsNil() {
				return true
			}
			p := v.Pointer()
			if w.onPath[p] {
				return false
			}
			w.onPath[p] = true
			defer delete(w.onPath, p)
		}
		if v.Kind() == reflect.Map {
			for it := v.MapRange(); it.Next(); {
				if !w.walk(it.Key(), depth+1) || !w.walk(it.Value(), depth+1) {
					return false
				}
			}
			return true
		}
		if k := v.Type().Elem().Kind(); k <= reflect.Complex128 || k == reflect.String {
			return true // flat elements: fmt prints them in linear time
		}
		for i := range v.Len() {
			if !w.walk(v.Index(i), depth+1) {
				return false
			}
		}
	}
	return true
}

// describe renders a raw failure for Development mode.
func describe(v any) string {
	switch v := v.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return formatValue(v)
}

// stackFrames turns a goroutine stack as runtime/debug.Stack writes it
// into one string per frame, "function file:line", starting at the frame
// that panicked: the goroutine header, the frames of the recovery itself
// (debug.Stack, fx's deferred recover) and the runtime's panic frame are
// dropped, and so are the argument lists and the "+0x.." pc offsets. A
// stack without a panic frame keeps all its frames. Lines that do not
// parse are kept as they are, so nothing of the stack is lost.
//
// It is how the boundary logs a panic in Development mode: an array
// attribute, one element per frame, that a JSON log handler prints as an
// array and a reader can follow frame by frame. Production logs keep the
// raw stack as one string (one line per record in any slog handler).
// Cost: a few allocations per frame, on the panic path only.
func stackFrames(stack []byte) []string {
	lines := strings.Split(strings.TrimRight(string(stack), "\n"), "\n")
	if len(lines) > 0 && strings.HasPrefix(lines[0], "goroutine ") {
		lines = lines[1:]
	}
	frames := make([]string, 0, len(lines)/2)
	start := 0
	for i := 0; i < len(lines); i++ {
		fn := lines[i]
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") {
			i++
			if strings.HasPrefix(fn, "panic(") && start == 0 {
				frames, start = frames[:0], -1 // everything above is the recovery
				continue
			}
			frames = append(frames, frameName(fn)+" "+fileLine(lines[i]))
			continue
		}
		frames = append(frames, fn)
	}
	return frames
}

// frameName drops the argument list of a function line: "pkg.F(0x1, ...)"
// becomes "pkg.F"; a "created by ..." line is kept whole.
func frameName(fn string) string {
	if strings.HasPrefix(fn, "created by ") {
		return fn
	}
	if i := strings.LastIndexByte(fn, '('); i > 0 && strings.HasSuffix(fn, ")") {
		return fn[:i]
	}
	return fn
}

// fileLine drops the tab and the pc offset of a file line:
// "\t/src/app.go:12 +0x1d" becomes "/src/app.go:12".
func fileLine(s string) string {
	s = strings.TrimPrefix(s, "\t")
	if i := strings.LastIndex(s, " +0x"); i > 0 {
		s = s[:i]
	}
	return s
}
