package precisebucket

import (
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/sciprun"
)

// NonePushed is why a snapshot pushed without a precise index is answered
// by search.
const NonePushed = "no precise index was pushed with this snapshot: run scripts/snapshot push with indexers or -scip"

// stateOf is the State of the indexing of a snapshot whose pointer is p:
// projects[i] is how far p.Precise[i] is, ready[i] its store when it is
// ready.
func stateOf(p repo.Pointer, projects []precise.ProjectState, ready []*precise.Index) precise.State {
	if len(p.Precise) == 0 {
		return precise.State{Cover: func(string) (int, string) { return -1, NonePushed }}
	}
	var found []sciprun.Project // what push found, for why a file is in none
	for _, x := range p.Precise {
		if x.Indexer != repo.Uploaded {
			found = append(found, project(x))
		}
	}
	cover := func(path string) (int, string) {
		why := ""
		for i, x := range p.Precise {
			if !Covers(x, path) {
				continue
			}
			if ready[i] != nil && !has(ready[i], path) {
				why = "the " + projects[i].Language + " index has no document for it (its indexer left it out)"
				continue
			}
			return i, ""
		}
		if why != "" {
			return -1, why
		}
		_, err := sciprun.Cover(found, path)
		return -1, err.Error()
	}
	return precise.State{Projects: projects, Cover: cover}
}

// has reports whether ix has a document of path.
func has(ix *precise.Index, path string) bool {
	_, ok := ix.Document(path)
	return ok
}

// project is the project of sciprun's push indexed x of.
func project(x repo.PreciseIndex) sciprun.Project {
	return sciprun.Project{Language: sciprun.Language(x.Language), Root: x.Root, Indexer: x.Indexer, Nested: x.Nested, Vendored: x.Vendored}
}

// Covers reports whether x is the index of the file at path: a file of
// its project (sciprun.Project.Covers), or, for an index made elsewhere,
// a file in its folder in one of the languages of its documents (any,
// before they are known).
func Covers(x repo.PreciseIndex, path string) bool {
	if x.Indexer != repo.Uploaded {
		return project(x).Covers(path)
	}
	if x.Root != "." && x.Root != "" && !strings.HasPrefix(path, x.Root+"/") {
		return false
	}
	return len(x.Languages) == 0 || slices.Contains(x.Languages, language.Of(path))
}

// languageOf names what x indexes in answers ("the go index is running").
func languageOf(x repo.PreciseIndex) string {
	switch {
	case x.Language != "":
		return x.Language
	case len(x.Languages) > 0:
		return strings.Join(x.Languages, "/")
	}
	return "uploaded"
}
