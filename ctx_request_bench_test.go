package fx_test

import (
	"testing"

	"github.com/fxhq/fx"
)

func BenchmarkCookie(b *testing.B) {
	var sink string
	benchHandler(b, 200, func(c *fx.Ctx) error { sink = c.Cookie("sid"); return nil }, "Cookie", "a=1; sid=0123456789abcdef")
	_ = sink
}
