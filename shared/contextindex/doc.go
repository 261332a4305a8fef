// Package contextindex is the search index behind context_search: the
// project's discoveries (memory entries), session notes and code chunks,
// ranked by BM25 over a tokenizer made for code and notes and, when an
// embedder is configured, by cosine similarity of embedding vectors, the
// two lists fused by reciprocal rank.
//
// An index is made of segments: the code of one repository snapshot and
// the tenant's memory entries (read from the store on every query, so a
// discovery written a moment ago is found lexically before its vector
// exists). Code is cut into chunks and tokenized in batches of files on
// every core, each batch a segment, merged in order (the same index
// whatever the number of cores); a segment of code holds its chunks
// compactly, their text staying in the files they were cut from (or,
// decoded, deflated in blocks), and encodes as chunks, lexical statistics
// and a binary vector file. Package indexfile keeps those files in object
// storage; a live index (the local server's) is saved through it segment
// by segment (see LiveStore), so that a save writes about what changed.
// Vectors are keyed by the hash of the text embedded and the model, so
// unchanged text is never embedded twice.
package contextindex

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/codechunk"
)

// Source is what kind of item a document is.
type Source string

// The sources, as context_search reports them.
const (
	SourceDiscovery Source = "discovery"
	SourceSession   Source = "session"
	SourceCode      Source = "code"
)

// Discovery types, the values of the type filter.
const (
	TypePattern  = "pattern"
	TypeRule     = "rule"
	TypeDecision = "decision"
	TypeIssue    = "issue"
	// TypeSession is the type of every session note.
	TypeSession = "session"
)

// Doc is one searchable item.
type Doc struct {
	ID      string
	Source  Source
	Type    string // a discovery type, "session", or the kind of code chunk (func, type, section, block…)
	Content string
	Module  string    // "" for none
	Session string    // "" for none
	Date    time.Time // zero for none
	Path    string    // code: the file, slash-separated
	Name    string    // code: the declaration or heading ("func (*Decoder) Decode"), "" for a block
	// Code: the chunk's first and last line, and the byte offset of
	// Content in the file.
	Start, End, From int
}

// CodeDoc is the document of a chunk of a file modified at mod.
func CodeDoc(c codechunk.Chunk, mod time.Time) Doc {
	return Doc{
		ID: c.ID(), Source: SourceCode, Type: c.Kind, Content: c.Text,
		Module: codechunk.Module(c.Path), Path: c.Path, Name: c.Name, Date: mod.UTC(),
		Start: c.Start, End: c.End, From: c.From,
	}
}

// EmbedText is the text embedded for d: the content, after the path for
// code and the module for notes, cut at MaxEmbedBytes.
func (d Doc) EmbedText() string {
	var t string
	switch {
	case d.Source == SourceCode:
		t = d.Path + "\n" + d.Content
	case d.Module != "":
		t = d.Module + ": " + d.Content
	default:
		t = d.Content
	}
	return codechunk.Cut(t, MaxEmbedBytes)
}

// MaxEmbedBytes bounds the text sent to an embedding model (Titan Text
// Embeddings V2 takes 50,000 characters, most others about 8,000 tokens).
const MaxEmbedBytes = 8000

// TextHash is the key of a text's vector: the hex SHA-256 of the text.
func TextHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// ModuleMatches reports whether a document's module lies in the filter's
// module: the filter's slash-separated segments appear as a run of whole
// segments of the module, ignoring case. "auth" matches "auth",
// "src/server/auth" and "auth/jwt"; "net/http" matches "net/http/httptest";
// "aut" matches nothing of those.
func ModuleMatches(module, filter string) bool {
	if module == "" || filter == "" {
		return false
	}
	m := "/" + strings.ToLower(strings.Trim(module, "/")) + "/"
	f := "/" + strings.ToLower(strings.Trim(filter, "/")) + "/"
	return strings.Contains(m, f)
}
