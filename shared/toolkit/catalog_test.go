package toolkit_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// TestServedTools: the served tools are named by their contracts' canonical
// names, once each; aliases resolve to them, and tools with a contract that
// are not served are not Had.
func TestServedTools(t *testing.T) {
	set, err := schema.Load(fstest.MapFS{"echo.json": {Data: []byte(contract)}, "writer.json": {Data: []byte(writer)}})
	if err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		name    string
		names   []string
		wantErr string
	}{
		{"no contract", []string{"ghost"}, `"ghost" has no contract`},
		{"an alias", []string{"echo-alias"}, `"echo-alias" has no contract`},
		{"twice", []string{"echo", "echo"}, `"echo" is named twice`},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := toolkit.NewServedTools(set, tt.names); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}

	s, err := toolkit.NewServedTools(set, []string{"echo"})
	if err != nil {
		t.Fatal(err)
	}
	has := []struct {
		name, wantCanonical string
		wantOK              bool
	}{
		{"echo", "echo", true},
		{"echo-alias", "echo", true},
		{"writer", "writer", false}, // a contract, but not served
		{"nope", "", false},
	}
	for _, tt := range has {
		if c, ok := s.Has(tt.name); c != tt.wantCanonical || ok != tt.wantOK {
			t.Errorf("Has(%q) = %q, %v; want %q, %v", tt.name, c, ok, tt.wantCanonical, tt.wantOK)
		}
	}
	if got := s.Names(); !slices.Equal(got, []string{"echo"}) {
		t.Errorf("Names() = %v", got)
	}
	if got := s.Served(); len(got) != 1 || got[0].Name != "echo" {
		t.Errorf("Served() = %v", got)
	}
}
