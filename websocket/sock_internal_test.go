package websocket

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// clientFrame is a masked client frame of op with a payload of n bytes.
func clientFrame(op byte, n int) []byte {
	b := []byte{0x80 | op}
	switch {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	b = append(b, 1, 2, 3, 4)
	return append(b, make([]byte, n)...)
}

// The frame scan follows frame boundaries however the stream is cut into
// reads (a header split anywhere, payloads of every length form), finds
// none forbidden in a stream of valid frames, and finds the close frame
// of one byte where it starts.
func TestFrameScanFollowsFrameBoundaries(t *testing.T) {
	var stream []byte
	for _, n := range []int{0, 1, 2, 125, 126, 127, 1000, 65535, 65536, 70000} {
		stream = append(stream, clientFrame(0x2, n)...)
		stream = append(stream, clientFrame(0x9, min(n, 125))...) // a ping between
	}
	stream = append(stream, clientFrame(0x8, 2)...) // a valid close
	bad := len(stream)
	stream = append(stream, clientFrame(0x8, 1)...)
	stream = append(stream, clientFrame(0x1, 5)...)
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var f frameScan
		found := -1
		for off := 0; off < len(stream); {
			n := 1 + r.IntN(3000)
			if round%4 == 0 {
				n = 1 + r.IntN(3) // headers cut byte by byte
			}
			end := min(off+n, len(stream))
			if at, why := f.next(stream[off:end]); at >= 0 {
				found = off + at
				if at == 0 && off > bad {
					found = bad // its header began in an earlier read
				}
				if why == "" {
					t.Fatal("a forbidden frame without a reason")
				}
				break
			}
			off = end
		}
		if found != bad {
			t.Fatalf("round %d: forbidden frame found at %d; want %d", round, found, bad)
		}
	}
}

// BenchmarkFrameScan is the scan's cost per small message (a 32-byte
// masked frame, its header followed byte by byte), what sock.Read adds
// to every read.
func BenchmarkFrameScan(b *testing.B) {
	var chunk []byte
	for range 32 {
		chunk = append(chunk, clientFrame(0x1, 32)...)
	}
	var f frameScan
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		if at, _ := f.next(chunk); at >= 0 {
			b.Fatal("a valid frame found forbidden")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*32), "ns/frame")
}
