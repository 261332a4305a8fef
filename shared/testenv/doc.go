// Package testenv holds, in its sub-packages, what tests, benchmarks and
// developer scripts stand up around Toolshed: the emulators (dynalite,
// moto_server), the Lambda runtime harness, the store conformance suite,
// repositories to serve, embedding and tool test servers, a process's
// memory, the tenant strings every tenant check is run over. No runtime
// package imports them (TestRuntimeDoesNotImportTestenv).
package testenv
