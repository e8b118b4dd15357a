package openapi

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// YAML encodes a document of JSON values (what Generate returns) as YAML
// 1.2: block mappings with sorted keys, block sequences, every string
// double-quoted (with Go's escapes, which YAML shares: \", \\, \n, \t,
// \xXX, \uXXXX, \UXXXXXXXX), so no string is ever read back as a number,
// a boolean or null. It covers only that JSON-compatible subset: other Go
// values (structs, typed slices) are first turned into JSON values by the
// caller. It returns an error for a value outside the subset, or a NaN or
// infinite number (which JSON cannot carry either).
func YAML(doc map[string]any) ([]byte, error) {
	var b strings.Builder
	if err := yamlValue(&b, doc, 0, false); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// yamlValue writes v at indent; inline is true when v follows "key:" or
// "- " on the same line.
func yamlValue(b *strings.Builder, v any, indent int, inline bool) error {
	pad := strings.Repeat("  ", indent)
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString(" {}\n")
			return nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if inline {
			b.WriteString("\n")
		}
		for _, k := range keys {
			b.WriteString(pad + strconv.Quote(k) + ":")
			if err := yamlValue(b, x[k], indent+1, true); err != nil {
				return err
			}
		}
		return nil
	case []any:
		if len(x) == 0 {
			b.WriteString(" []\n")
			return nil
		}
		if inline {
			b.WriteString("\n")
		}
		for _, e := range x {
			b.WriteString(pad + "-")
			if err := yamlValue(b, e, indent+1, true); err != nil {
				return err
			}
		}
		return nil
	}
	s, err := yamlScalar(v)
	if err != nil {
		return err
	}
	if inline {
		b.WriteString(" ")
	} else {
		b.WriteString(pad)
	}
	b.WriteString(s + "\n")
	return nil
}

func yamlScalar(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "null", nil
	case string:
		return strconv.Quote(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("openapi: YAML: number %v has no JSON form", x)
		}
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case int:
		return strconv.Itoa(x), nil
	}
	return "", fmt.Errorf("openapi: YAML: %s is not a JSON value", reflect.TypeOf(v))
}
