package kittest

import "runtime"

// SettledHeap returns the runtime's memory statistics read once the heap
// has settled: it runs two full collections first, because sync.Pool
// keeps what it held for one collection more (its victim cache), so only
// the second one frees what the pools, fasthttp's among them, were
// holding. Then HeapAlloc is the live heap (the bytes still reachable),
// HeapInuse that plus the free room of the spans holding it, StackInuse
// the goroutines' stacks: a test compares them before and after it makes
// or drops what it measures.
//
// It costs two full collections (each marks the whole live heap and
// stops the world briefly) and a ReadMemStats (another brief stop): call
// it outside timed loops.
func SettledHeap() runtime.MemStats {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms
}
