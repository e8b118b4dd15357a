package fx

import (
	"fmt"
	"reflect"
)

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
