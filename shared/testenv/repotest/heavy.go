package repotest

import (
	"fmt"
	"strings"
)

// Heavy is a repository large enough that the heaviest calls of the
// repository tools take far longer than a client waits for them: 400 Go
// files of 16 KB (6 MB) in one module (example.com/big), a package of 150
// files (dep/), and a Go file, a script and a Python module each with
// 20,000 imports (cmd/big.go, web/big.js, py/big.py), of that package or
// of missing ones. docs/a.md is 100 KB of text about serving requests.
func Heavy() map[string]string {
	files := map[string]string{
		"go.mod":             "module example.com/big\n\ngo 1.22\n",
		"README.md":          "# Big\n",
		"docs/a.md":          strings.Repeat("A line of documentation about serving requests.\n", 2000),
		"py/pkg/__init__.py": "",
	}
	body := strings.Repeat("// Serve answers a request with its handler, as the router chose it.\nfunc f%[1]d(x int) int { return x + %[1]d }\n", 150)
	for i := range 400 {
		files[fmt.Sprintf("pkg/p%02d/f%04d.go", i%8, i)] = fmt.Sprintf("package p%02d\n\n", i%8) + fmt.Sprintf(body, i)
	}
	for i := range 150 {
		files[fmt.Sprintf("dep/f%03d.go", i)] = "package dep\n"
		files[fmt.Sprintf("py/pkg/m%03d.py", i)] = "X = 1\n"
	}
	var goImports, requires, pyImports strings.Builder
	for i := range 20000 {
		if i%2 == 0 {
			goImports.WriteString("\t_ \"example.com/big/dep\"\n")
		} else {
			fmt.Fprintf(&goImports, "\t_ \"example.com/big/missing%d\"\n", i)
		}
		fmt.Fprintf(&requires, "require('./missing%d');\n", i)
		fmt.Fprintf(&pyImports, "from .pkg import m%03d\n", i%150)
	}
	files["cmd/big.go"] = "package main\n\nimport (\n" + goImports.String() + ")\n"
	files["web/big.js"] = requires.String()
	files["py/big.py"] = pyImports.String()
	return files
}
