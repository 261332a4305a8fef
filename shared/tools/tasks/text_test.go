package tasks

import (
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// The pipeline's schema refuses most of these before a handler runs; the
// handlers check again, so a looser contract cannot let them through.

func TestCleanTitle(t *testing.T) {
	tests := []struct {
		in, want string
		field    string // "" when valid
	}{
		{"Test task", "Test task", ""},
		{"  x  ", "x", ""},
		{" " + strings.Repeat("t", 255) + " ", strings.Repeat("t", 255), ""},
		{strings.Repeat("é", 255), strings.Repeat("é", 255), ""},
		{"", "", "title"},
		{" \t\n\v\f\r\u0085\u00a0\u2028\u3000", "", "title"},
		{strings.Repeat("t", 256), "", "title"},
		{strings.Repeat("é", 256), "", "title"},
	}
	for _, tc := range tests {
		got, err := cleanTitle(tc.in)
		checkClean(t, "title", tc.in, got, tc.want, err, tc.field)
	}
}

func TestCleanDescription(t *testing.T) {
	tests := []struct {
		in    *string
		want  string // "<nil>" for none
		field string
	}{
		{nil, "<nil>", ""},
		{ptr(""), "<nil>", ""},
		{ptr(" \n\t\u00a0"), "<nil>", ""},
		{ptr(" d "), "d", ""},
		{ptr(" " + strings.Repeat("d", 1000) + "\n"), strings.Repeat("d", 1000), ""},
		{ptr(strings.Repeat("d", 1001)), "", "description"},
	}
	for _, tc := range tests {
		got, err := cleanDescription(tc.in)
		gotS := "<nil>"
		if got != nil {
			gotS = *got
		}
		in := "<nil>"
		if tc.in != nil {
			in = *tc.in
		}
		checkClean(t, "description", in, gotS, tc.want, err, tc.field)
	}
}

func TestTaskPatchNeedsAField(t *testing.T) {
	_, err := taskPatch(updateInput{TaskID: 1})
	if te, ok := err.(*toolerr.Error); !ok || te.Code != toolerr.InvalidInput {
		t.Errorf("empty patch: got %v, want INVALID_INPUT", err)
	}
}

func TestTaskIDMustBePositive(t *testing.T) {
	for _, n := range []int64{0, -1} {
		if _, err := taskID(schema.Int(n)); err == nil || !strings.Contains(err.Error(), "task_id") {
			t.Errorf("task_id %d: got %v, want INVALID_INPUT naming task_id", n, err)
		}
	}
}

func checkClean(t *testing.T, what, in, got, want string, err error, field string) {
	t.Helper()
	if field == "" {
		if err != nil || got != want {
			t.Errorf("%s %q: got %q, %v; want %q", what, in, got, err, want)
		}
		return
	}
	te, ok := err.(*toolerr.Error)
	if !ok || te.Code != toolerr.InvalidInput || !strings.HasPrefix(te.Message, field+": ") {
		t.Errorf("%s %q: got %q, %v; want INVALID_INPUT naming %s", what, in, got, err, field)
	}
}

func ptr(s string) *string { return &s }
