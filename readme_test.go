package fx_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fxhq/fx"
)

// TestReadmeCatalogTable keeps the README's table of codes and the catalog
// in step: same codes, same statuses, nothing missing on either side.
func TestReadmeCatalogTable(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "<!-- catalog:start -->")
	end := strings.Index(s, "<!-- catalog:end -->")
	if start < 0 || end < start {
		t.Fatal("README.md has no catalog table between the catalog markers")
	}
	row := regexp.MustCompile("^\\| `(FX_[A-Z_]+)` \\| (\\d{3}) \\|")
	table := map[string]int{}
	for _, line := range strings.Split(s[start:end], "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := table[m[1]]; dup {
			t.Errorf("README lists %s twice", m[1])
		}
		table[m[1]], _ = strconv.Atoi(m[2])
	}
	for code, status := range fx.ErrorStatus {
		got, ok := table[code]
		switch {
		case !ok:
			t.Errorf("README table lacks %s", code)
		case got != status:
			t.Errorf("README says %s is %d, the catalog says %d", code, got, status)
		}
	}
	for code := range table {
		if _, ok := fx.ErrorStatus[code]; !ok {
			t.Errorf("README lists %s, which is not in fx.ErrorStatus", code)
		}
	}
}

// TestReadmeStartsWithCommands checks the README opens with the two
// commands a newcomer needs.
func TestReadmeStartsWithCommands(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	head := string(b)
	if len(head) > 400 {
		head = head[:400]
	}
	for _, cmd := range []string{"go run ./examples/hello", "go test ./..."} {
		if !strings.Contains(head, cmd) {
			t.Errorf("README does not open with %q", cmd)
		}
	}
}

// TestReadmeTablesHaveMeasurements: no table row in the README reports a
// measurement of nothing. A row whose numeric cells are all zero is what a
// benchmark script prints when its run failed or was cut short; pasted
// into the README, it would present a broken run as a result.
func TestReadmeTablesHaveMeasurements(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		numbers, nonzero := 0, false
		cells := strings.Split(strings.Trim(line, "| "), "|")
		for _, cell := range cells[1:] { // the first cell names the row (it may be a number: connections)
			f, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
			if err != nil {
				continue
			}
			numbers++
			nonzero = nonzero || f != 0
		}
		if numbers >= 2 && !nonzero {
			t.Errorf("README.md:%d: a table row of zeros: %s", i+1, line)
		}
	}
}
