package fx

import (
	"fmt"
	"strings"
)

// Plugin bundles setup work (routes, middleware, the hook, resources) under
// a name other plugins can depend on. Plugins may be registered in any
// order: Boot runs each Setup after the Setup of everything it depends on,
// ties in registration order. A dependency that is never registered is
// FX_PLUGIN_MISSING_DEPENDENCY, a cycle FX_PLUGIN_DEPENDENCY_CYCLE; in both
// cases no Setup runs (no further one, when the offending plugin was
// registered by a Setup). A Setup that returns an error (or panics) aborts
// Boot with that error. Routes, middleware and the hook registered by Setup
// take effect as if registered before Boot; plugins registered by Setup are
// set up in the same Boot, in dependency order with all the others. Setup
// must not call Boot, Listen, Serve or Test: Boot is still running and they
// would wait for it.
type Plugin struct {
	Name      string
	DependsOn []string
	Setup     func(app *App) error
}

// orderPlugins returns the plugins in Setup order, or the configuration
// errors that prevent ordering them.
func orderPlugins(ps []Plugin) ([]Plugin, []error) {
	var errs []error
	index := make(map[string]int, len(ps))
	for i, p := range ps {
		if _, dup := index[p.Name]; dup {
			errs = append(errs, configError(fmt.Sprintf("Plugin %q", p.Name), "registered twice"))
			continue
		}
		index[p.Name] = i
	}
	for _, p := range ps {
		for _, d := range p.DependsOn {
			if _, ok := index[d]; !ok {
				errs = append(errs, catalogError(codePluginMissingDependency,
					fmt.Sprintf("Plugin %q depends on %q, which is not registered", p.Name, d)))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if cycle := findCycle(ps, index); cycle != nil {
		return nil, []error{catalogError(codePluginDependencyCycle,
			"Plugin dependency cycle: "+strings.Join(cycle, " -> "))}
	}
	// Repeatedly take the first registered plugin whose dependencies are
	// all done: dependencies first, ties in registration order.
	done := make([]bool, len(ps))
	order := make([]Plugin, 0, len(ps))
	for len(order) < len(ps) {
		for i, p := range ps {
			if done[i] || !depsDone(p, index, done) {
				continue
			}
			done[i] = true
			order = append(order, p)
			break
		}
	}
	return order, nil
}

func depsDone(p Plugin, index map[string]int, done []bool) bool {
	for _, d := range p.DependsOn {
		if !done[index[d]] {
			return false
		}
	}
	return true
}

// findCycle returns one dependency cycle as names (first name repeated at
// the end), or nil.
func findCycle(ps []Plugin, index map[string]int) []string {
	const (
		unvisited = iota
		onStack
		finished
	)
	state := make([]int, len(ps))
	var stack []string
	var visit func(i int) []string
	visit = func(i int) []string {
		state[i] = onStack
		stack = append(stack, ps[i].Name)
		for _, d := range ps[i].DependsOn {
			j := index[d]
			switch state[j] {
			case onStack:
				for k, name := range stack {
					if name == d {
						return append(append([]string{}, stack[k:]...), d)
					}
				}
			case unvisited:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = finished
		return nil
	}
	for i := range ps {
		if state[i] == unvisited {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}

// runSetup runs one plugin's Setup, turning a panic into an error.
func runSetup(a *App, p Plugin) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = configError(fmt.Sprintf("Plugin %q", p.Name), "Setup panicked: %s", formatValue(r))
		}
	}()
	if p.Setup == nil {
		return nil
	}
	if err := p.Setup(a); err != nil {
		return fmt.Errorf("fx: plugin %q: %w", p.Name, err)
	}
	return nil
}
