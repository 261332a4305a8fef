package smoke

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteTable writes the report for people: the server, a row per tool with
// each route's outcome and latency, then every problem found.
func (r Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s at %s: %d tools\n\n", r.Server, r.URL, len(r.Tools))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "tool")
	for _, route := range Routes {
		fmt.Fprintf(tw, "\t%s", route)
	}
	fmt.Fprintln(tw)
	cells := map[string]map[string]Call{}
	for _, c := range r.Calls {
		if cells[c.Tool] == nil {
			cells[c.Tool] = map[string]Call{}
		}
		cells[c.Tool][c.Route] = c
	}
	for _, tool := range r.Tools {
		fmt.Fprint(tw, tool)
		for _, route := range Routes {
			fmt.Fprintf(tw, "\t%s", cell(cells[tool][route]))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	problems := 0
	for _, c := range r.Calls {
		if c.Problem != "" {
			problems++
			fmt.Fprintf(w, "\nFAIL %s on %s: %s", c.Tool, c.Route, c.Problem)
		}
	}
	_, err := fmt.Fprintf(w, "\n%d calls, %d problems\n", len(r.Calls), problems)
	return err
}

// cell is one call in the table: its outcome and latency, or FAIL.
func cell(c Call) string {
	switch {
	case c.Tool == "":
		return "-"
	case c.Problem != "":
		return "FAIL"
	}
	return fmt.Sprintf("%s %s", c.Outcome, c.Took.Round(100*time.Microsecond))
}
