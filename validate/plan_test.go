package validate_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx/validate"
)

// textLevel is a number in Go that a request sends as a string.
type textLevel int

func (l *textLevel) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return errors.New("not a level")
	}
	return nil
}

// textColor is a string in Go and in JSON, read by its UnmarshalText.
type textColor string

func (c *textColor) UnmarshalText(b []byte) error {
	*c = textColor(strings.ToLower(string(b)))
	return nil
}

type classified struct {
	Level textLevel `json:"level" validate:"required"`
	Color textColor `json:"color" validate:"omitempty,oneof=red blue"`
	When  time.Time `json:"when" validate:"required"`
	Pair  [2]int    `json:"pair" validate:"dive,min=1"`
}

// TestOneKindClassification holds the one classification of a Go type
// (what JSON sends for it, what its words apply to) where the two
// readings differ: a type that decodes itself from text, time.Time and
// a Go array are read alike by the tree and the bytes, and documented as
// they are checked.
func TestOneKindClassification(t *testing.T) {
	for body, want := range map[string]string{
		`{"level":"high","color":"RED","when":"2024-01-02T03:04:05Z","pair":[1,2]}`: "",
		`{"color":"green","when":"2024-01-02T03:04:05Z","pair":[1,2]}`:              "level: Required\ncolor: Must be one of: \"red\", \"blue\"",
		`{"level":"low","pair":[0,3]}`:                                              "when: Required\npair.0: Must be at least 1",
		`{"level":3,"when":"now","pair":[1]}`:                                       "level: Expected a string, got a number\nwhen: Expected a date-time string (RFC 3339), got \"now\"\npair.1: Must be at least 1",
	} {
		got := strings.Join(tagIssues[classified](t, body, 0), "\n")
		if got != want {
			t.Errorf("%s:\n got %q\nwant %q", body, got, want)
		}
	}
	props := validate.Struct[classified]().JSONSchema()["properties"].(map[string]any)
	for name, want := range map[string]map[string]any{
		"level": {"type": "string"},
		"color": {"type": "string", "enum": []any{"red", "blue", ""}},
		"when":  {"type": "string", "format": "date-time"},
	} {
		if got := props[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s's schema: %v, want %v", name, got, want)
		}
	}
	// a word that reads the Go value of a type JSON sends as a string is
	// a start-up error: the document could not say it
	type minLevel struct {
		Level textLevel `json:"level" validate:"min=1"`
	}
	var te *validate.TagError
	if _, err := validate.CompileStruct[minLevel](); !errors.As(err, &te) || te.Word != "min=1" {
		t.Fatalf("min on a text type: %v, want a TagError for min=1", err)
	}
}
