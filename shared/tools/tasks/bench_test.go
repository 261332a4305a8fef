package tasks_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/tools/tasks"
)

// The benchmarks call the tools through the whole pipeline (rate-limit
// counter increment, input and output schema validation, store call) on
// each backend.

func BenchmarkAddTask(b *testing.B) {
	for _, be := range tooltest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			st := be.NewStores(b)
			h := tooltest.New(b, st, tasks.Tools(st.Tasks, nil, cursor.RandomKey()))
			args := `{"title":"Benchmark task","description":"Made by BenchmarkAddTask"}`
			for b.Loop() {
				if o := h.Call("bench", tasks.AddTool, args); !o.OK {
					b.Fatalf("add_task: %+v", o.Error)
				}
			}
		})
	}
}

func BenchmarkListTasks(b *testing.B) {
	const n = 50
	for _, be := range tooltest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			st := be.NewStores(b)
			h := tooltest.New(b, st, tasks.Tools(st.Tasks, nil, cursor.RandomKey()))
			for i := range n {
				h.OK(b, "bench", tasks.AddTool, fmt.Sprintf(`{"title":"task %d","description":"description %d"}`, i, i), nil)
			}
			for b.Loop() {
				o := h.Call("bench", tasks.ListTool, `{"limit":50}`)
				if !o.OK {
					b.Fatalf("list_tasks: %+v", o.Error)
				}
				var page struct{ Count int }
				if err := json.Unmarshal(o.Result, &page); err != nil || page.Count != n {
					b.Fatalf("listed %d tasks (%v), want %d", page.Count, err, n)
				}
			}
		})
	}
}
