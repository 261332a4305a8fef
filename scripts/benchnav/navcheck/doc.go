// Package navcheck holds precise navigation against the compilers' own
// answers: go/types for Go (GoTruth) and the TypeScript language service
// for TypeScript (TSTruth, a node script) say, for a sample of a
// project's identifiers, where each use's definition is and every use of
// a sampled symbol; Compare asks a Navigator — the precise store itself
// (Store), or the tools (Tools: find_definition and find_references at
// each position, through a server's pipeline, Serve) — the same
// questions at the same positions, and counts: definitions right, references' precision and
// recall, each call's time. Both sides are restricted to the project's
// non-test files.
//
// make bench-nav runs it on the Go tree and on rxjs's sources; its tests
// run it on small fixtures, where every answer must match.
package navcheck
