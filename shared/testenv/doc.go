// Package testenv holds, in its sub-packages, what tests, benchmarks and
// developer scripts stand up around Toolshed: the emulators (dynalite,
// moto_server), the Lambda runtime harness and the deployed stack on it,
// the store conformance suite, repositories to serve, embedding and tool
// test servers, a process's memory, the tenant strings every tenant check
// is run over; and for benchmarks, the local server as a process, ripgrep
// as grep's baseline, percentiles, and a way to use all of these from a
// program (standalone). No runtime
// package imports them (TestRuntimeDoesNotImportTestenv).
package testenv
