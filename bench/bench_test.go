package bench

import "testing"

// BenchmarkService runs every endpoint against every framework in process.
// Names are BenchmarkService/<endpoint>/<framework>; cmd/table turns one
// run into the comparison table.
func BenchmarkService(b *testing.B) {
	for _, ep := range Endpoints {
		for _, fw := range Frameworks {
			b.Run(ep.Name+"/"+fw.Name, func(b *testing.B) {
				benchEndpoint(b, fw.New(ep.Middleware), ep)
			})
		}
	}
}

// benchEndpoint sends ep's request to impl in a loop, after checking its
// status once.
func benchEndpoint(b *testing.B, impl Impl, ep Endpoint) {
	r := newRunner(b, impl, ep.Method, ep.Path, ep.Body)
	r.do()
	if got := r.status(); got != ep.Status {
		b.Fatalf("%s %s: status %d, want %d; body %s", ep.Method, ep.Path, got, ep.Status, r.body())
	}
	b.ReportAllocs()
	for b.Loop() {
		r.do()
	}
}
