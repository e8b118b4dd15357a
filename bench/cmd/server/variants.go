package main

import "github.com/fxhq/fx/bench"

// The scale test's cost-attribution variants (bench.ScaleVariants) are
// served like the frameworks: -fw fx-notimeouts, fx-bare, fx-header4k,
// raw-timeouts.
func init() {
	bench.Frameworks = append(bench.Frameworks[:len(bench.Frameworks):len(bench.Frameworks)], bench.ScaleVariants...)
}
