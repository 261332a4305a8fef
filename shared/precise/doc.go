// Package precise is the store of precise code intelligence: what a
// compiler-grade indexer (SCIP; see package fromscip, which converts SCIP
// into this store) knows of a repository at one commit, in a compact file
// that queries read by range — a local file, or an S3 object through a
// small block cache (objects.RangeReader) — so a Lambda answers from a
// five-copy Go tree's index without loading it.
//
// # Queries
//
// Index answers for one store: At (the symbol at a position), Symbol
// (hover: signature, documentation, definitions), References (paged, in
// path and position order, with each occurrence's roles),
// Implementations (from the indexer's relationships: what implements a
// type or method, and what it implements), Occurrences (of a document's
// lines: what a function uses and calls) and Document (its hash, to tell
// a file changed since indexing). Positions are 1-based lines and byte
// columns, in and out. A local symbol (SCIP's "local N") is only
// meaningful in its document: answers give it with its path
// (LocalSymbol), and queries take it back so.
//
// Set answers over several stores: a repository's (one per indexer or
// project, and overlays from re-indexing, a later store's document hiding
// the same path in earlier ones), and for global symbols the other
// repositories of the same tenant. NewSet takes the tenant and refuses a
// store made for another (WriterOptions.Tenant).
//
// Writer makes a store, streaming: each document's occurrences are
// written as the document is added, and what documents say of global
// symbols (information, relationships, occurrences) is gathered as
// records within a memory budget, spilled to sorted temporary files
// beyond it, and merged into the symbol table when the Writer closes.
//
// # Format (version 1)
//
// Numbers are unsigned varints; strings are a length and bytes; sorted
// strings are front-coded (the length shared with the string before, and
// the rest). Every block is stored compressed with S2, or as it is when
// that is not smaller (stored length equal to its raw length).
//
//	header     16 bytes: "TSPRECIS", version (uint32 LE), zero
//	data       in the order written:
//	           document blocks (one per document as it came; see docblock.go)
//	           symbols' side data and blocks of symbol entries, by symbol
//	           (see symtab.go)
//	tables     the document table, the sparse symbol index, the metadata
//	trailer    64 bytes: for the metadata, the documents and the sparse
//	           index, each: offset (uint64 LE), stored and raw lengths
//	           (uint32 LE); then the version, a CRC-32 of the 52 bytes
//	           before it, and "TSPRECIS"
//
// The document table is the languages, then each document sorted by path:
// its path, SHA-256, language, stale flag and blocks. The sparse index is
// each symbol block's first symbol and place. The metadata is the commit,
// tenant, indexer and the Writer's counts.
//
// Opening reads the header, the trailer and the three tables (a few MB
// for 57k documents); a query reads a document's block, or a symbol's
// block and then the side data it needs (its implementations, the
// directory of its reference groups, the groups of one page). Every
// offset, length and count read is checked against the store's size and
// bounds (64 MiB a block, 256 MiB a table) before it is used: a corrupt
// store is ErrCorrupt, never a panic or an allocation of what it claims.
package precise
