package fx

import (
	"strings"
)

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
