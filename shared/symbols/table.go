package symbols

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/repo"
)

// Table is the symbol table of one repository view, shared by every
// tenant that reads the view. It is built by the calls that read it: each
// call brings it on for the time it can spend (Build), parsing on every
// core, and answers from what is parsed so far; the next call goes on
// from there. Nothing runs between calls, for Lambda freezes a function
// between its invocations: a table whose calls stop is simply as far as
// they took it. Once built, a call finds it behind the view (a local view
// changed) and parses only the files that changed: an unchanged file is
// the same *repo.File from one Searchable call to the next, and keeps its
// symbols.
//
// With a Store, a table starts from the symbols saved with the view's
// index: a file whose path and content hash are stored is not parsed
// again (see Store). The call that finishes the first build saves it
// before it answers, so that no later environment parses it again.
//
// A table tells its view what it holds (View.Hold), so that its source
// keeps the view and its table within one memory budget; once the view is
// done (View.Done: its source replaced or dropped it) the table builds no
// more.
type Table struct {
	view  repo.View
	store Store // nil: nothing is saved
	log   *slog.Logger

	state   atomic.Pointer[State]
	stop    chan struct{}
	closing sync.Once
	// turn is held by the one caller that brings the table on (Build) or
	// closes it: a channel of one, so that a caller can stop waiting for
	// its turn.
	turn chan struct{}

	// What the caller holding turn reads and writes:
	holding int64                 // what the table told its view it holds
	loaded  bool                  // the store was read (or there is none)
	stored  map[string]storedFile // the store's symbols, until the first build is done
	unsaved int                   // files parsed since the last save
	saveDue bool                  // the first build is done, not yet saved

	// mu guards held (what the table holds of each file, by path), which
	// the caller holding turn writes and Parsed reads.
	mu   sync.Mutex
	held map[string]parsed

	// Parses counts the files parsed (for tests and logs: an unchanged
	// file is not parsed again, nor a file whose symbols were stored).
	Parses atomic.Int64
}

// Progress says how far a table is.
type Progress struct {
	Ready bool // every searchable file of the view's Version is parsed
	// Stopped: the table never started, and holds nothing: its view was
	// no longer served when it was asked for (a push replaced it; a call
	// again gets the current one), or the process is closing.
	Stopped     bool
	FilesParsed int // files whose symbols are in the table
	FilesTotal  int // searchable files in a language this build reads
	Symbols     int
	Version     uint64 // the view's version the table shows once ready
}

// State is one state of a table. It never changes: a lookup takes the
// current one and reads it.
type State struct {
	Progress Progress
	files    map[string]*File // by path
	names    []nameRef        // every symbol, by lower-cased name
	unread   []unreadFile     // files of code without symbols
}

// unreadFile is a file of code the table has no symbols of.
type unreadFile struct {
	path, language string
	reason         Reason
}

// UnreadFiles are the files of code of one language that have no symbols,
// and why.
type UnreadFiles struct {
	Language string
	Reason   Reason
	Files    int
}

// Unread counts the files of code the table has no symbols of (in a
// language without a parser, or one this build lacks) that keep keeps
// (all when nil), by language: most files first.
func (st *State) Unread(keep func(path string) bool) []UnreadFiles {
	var out []UnreadFiles
	for _, u := range st.unread {
		if keep != nil && !keep(u.path) {
			continue
		}
		i := slices.IndexFunc(out, func(o UnreadFiles) bool { return o.Language == u.language })
		if i < 0 {
			i = len(out)
			out = append(out, UnreadFiles{Language: u.language, Reason: u.reason})
		}
		out[i].Files++
	}
	slices.SortFunc(out, func(a, b UnreadFiles) int {
		if a.Files != b.Files {
			return b.Files - a.Files
		}
		return strings.Compare(a.Language, b.Language)
	})
	return out
}

// nameRef is one symbol in State.names.
type nameRef struct {
	lower string // the name, lower-cased
	file  *File
	i     int32 // in file.Symbols
}

// NewTable returns view's symbol table, empty: Build builds it, from what
// store holds when it is not nil. Close saves what the table parsed since
// its last save.
func NewTable(view repo.View, store Store, log *slog.Logger) *Table {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &Table{view: view, store: store, log: log, stop: make(chan struct{}), turn: make(chan struct{}, 1), held: map[string]parsed{}}
	t.state.Store(&State{files: map[string]*File{}})
	return t
}

// stoppedTable returns a table of view that never builds (no store read,
// no parse): it holds nothing, and its state says so (Progress.Stopped).
func stoppedTable(view repo.View) *Table {
	t := NewTable(view, nil, nil)
	t.closing.Do(func() { close(t.stop) })
	t.state.Store(&State{files: map[string]*File{}, Progress: Progress{Stopped: true}})
	return t
}

// Close stops the table: a Build under way stops between files, and none
// starts after. It saves what the table parsed since its last save,
// unless its view is done (served no more, it is not worth a write).
func (t *Table) Close() {
	t.closing.Do(func() { close(t.stop) })
	t.turn <- struct{}{}
	defer func() { <-t.turn }()
	if !isClosed(t.view.Done()) && t.unsaved > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		t.save(ctx)
	}
	t.hold(0) // what the table held is let go with it
}

// State returns the current state.
func (t *Table) State() *State { return t.state.Load() }

// Build brings the table on towards the view as it is now and returns its
// state then: ready, or as far as it came (the next Build goes on from
// there). It parses for at most work (0: until done), or until ctx ends;
// a step that cannot be cut (reading the stored table at first, saving
// the first build once done) runs to its end within ctx, so that every
// call moves the table on. One caller builds at a time, on every core; a
// caller whose turn does not come within work answers from the state.
func (t *Table) Build(ctx context.Context, work time.Duration) *State {
	parsing := ctx
	if work > 0 {
		var cancel context.CancelFunc
		parsing, cancel = context.WithTimeout(ctx, work)
		defer cancel()
	}
	select {
	case t.turn <- struct{}{}:
	case <-parsing.Done():
		return t.State()
	case <-t.stop:
		return t.State()
	}
	defer func() { <-t.turn }()
	ctx, stopped := t.whileServed(ctx)
	defer stopped()
	parsing, stoppedParsing := t.whileServed(parsing)
	defer stoppedParsing()
	t.advance(ctx, parsing)
	return t.State()
}

// whileServed returns ctx ended too when the table closes or its view is
// done.
func (t *Table) whileServed(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-t.stop:
		case <-t.view.Done():
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}

// advance is Build's work, with the turn held: parsing bounds the parse,
// ctx the rest.
func (t *Table) advance(ctx, parsing context.Context) {
	if isClosed(t.stop) || isClosed(t.view.Done()) {
		return // closed, or its view no longer served: it builds no more
	}
	if !t.loaded {
		stored, ok := t.load(ctx)
		if !ok {
			return
		}
		t.stored, t.loaded = stored, true
	}
	v := t.view.Version()
	if p := t.State().Progress; !p.Ready || p.Version != v {
		v, files, ok := repo.LatestSearchable(parsing, t.view, t.log, "symbols")
		if !ok {
			return
		}
		n, done := t.update(parsing, files, v, t.stored)
		t.unsaved += n
		if !done {
			return
		}
		if t.stored != nil {
			// The first build is done: it is saved (later changes are
			// saved when the table closes), and the stored symbols let go.
			t.stored, t.saveDue = nil, true
		}
	}
	if t.saveDue && t.save(ctx) {
		t.saveDue = false
	}
}

// Parsed returns the symbols of f, a searchable file of the table's view
// at version v (or a later one), for another reader of the one parse of
// each file (a live code index cuts files at them): the table's, built
// here when the table has not come to f. When the table will not have
// them (it is closed, or has moved past f: the view changed since), f is
// parsed here, and counted in Parses. It returns nil for a file this
// build reads no symbols in, and false when ctx ends or the view is done
// first.
func (t *Table) Parsed(ctx context.Context, f *repo.File, v uint64) (*File, bool) {
	if !Supports(f.Path) {
		return nil, true
	}
	for {
		// The state first: once it is ready at a version, held has every
		// file of that version.
		p := t.State().Progress
		t.mu.Lock()
		h := t.held[f.Path]
		t.mu.Unlock()
		switch {
		case h.file != nil && h.file.Of(f):
			return h.file, true
		case isClosed(t.view.Done()) || ctx.Err() != nil:
			return nil, false
		case isClosed(t.stop) || p.Ready && p.Version > v:
			t.Parses.Add(1)
			return Parse(f.Path, f.Text()), true
		}
		t.Build(ctx, 0)
	}
}

// parsed is what the table holds of one file.
type parsed struct {
	src   *repo.File // the view's file it was parsed from (its Hash, the content's)
	file  *File
	fresh bool // parsed now, not read from the store
}

// Publishing while a large update runs: first after publishFirst, then
// after twice as long each time (every publish sorts every name).
const publishFirst = 500 * time.Millisecond

// update brings held towards the view's files at version v: files that
// are new or changed are parsed on every core (unless stored has their
// symbols), removed ones dropped, until ctx ends; a large update
// publishes what it has as it goes, and when ctx ends. It returns how
// many files it parsed, and whether it is done.
func (t *Table) update(ctx context.Context, files []*repo.File, v uint64, stored map[string]storedFile) (int, bool) {
	started := time.Now()
	t.mu.Lock()
	todo, total, unread := changes(t.held, files)
	t.mu.Unlock()
	wait, publishAt := publishFirst, started.Add(publishFirst)
	parses := 0
	for r := range parseAll(ctx, todo, stored) {
		t.add(r)
		if r.fresh {
			parses++
			t.Parses.Add(1)
		}
		if time.Now().After(publishAt) {
			t.publish(unread, Progress{FilesParsed: len(t.held), FilesTotal: total, Version: v})
			wait *= 2
			publishAt = time.Now().Add(wait)
		}
	}
	if ctx.Err() != nil {
		t.publish(unread, Progress{FilesParsed: len(t.held), FilesTotal: total, Version: v})
		return parses, false
	}
	t.publish(unread, Progress{Ready: true, FilesParsed: len(t.held), FilesTotal: total, Version: v})
	if len(todo) > 0 {
		t.log.Info("symbols: table updated", "files", total, "parsed", parses, "stored", len(todo)-parses,
			"symbols", t.State().Progress.Symbols, "bytes", t.holding, "took_ms", time.Since(started).Milliseconds())
	}
	return parses, true
}

// add holds r.
func (t *Table) add(r parsed) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.held[r.src.Path] = r
}

// isClosed reports whether c is closed.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// changes compares held with the view's files: it returns those to parse
// (new or changed), how many files this build reads, and the files of
// code it reads no symbols in; it drops from held the files that went.
func changes(held map[string]parsed, files []*repo.File) (todo []*repo.File, total int, unread []unreadFile) {
	present := make(map[string]bool, len(files))
	for _, f := range files {
		if why := Unread(f.Path); why != "" {
			if lang := language.Of(f.Path); language.IsCode(lang) {
				unread = append(unread, unreadFile{path: f.Path, language: lang, reason: why})
			}
			continue
		}
		present[f.Path] = true
		if held[f.Path].src != f {
			todo = append(todo, f)
		}
	}
	for p := range held {
		if !present[p] {
			delete(held, p)
		}
	}
	return todo, len(present), unread
}

// parseAll parses files on every core (see parse) and sends what each
// holds; the channel is closed once every file is sent, or sooner when ctx
// ends.
func parseAll(ctx context.Context, files []*repo.File, stored map[string]storedFile) <-chan parsed {
	results := make(chan parsed)
	work := make(chan *repo.File)
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			for f := range work {
				results <- parse(f, stored)
			}
		})
	}
	go func() {
		defer close(work)
		for _, f := range files {
			select {
			case work <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		workers.Wait()
		close(results)
	}()
	return results
}

// parse returns the symbols of f: stored's when they are of its content,
// else parsed (fresh).
func parse(f *repo.File, stored map[string]storedFile) parsed {
	p := parsed{src: f}
	if s, ok := stored[f.Path]; ok && s.Hash == f.Hash() && s.fits(f.Size()) {
		p.file = &File{Path: f.Path, Language: language.Of(f.Path), Symbols: s.Symbols, src: f}
		return p
	}
	p.file, p.fresh = Parse(f.Path, f.Text()), true
	if p.file != nil {
		p.file.detach(f)
	}
	return p
}

// storeTimeout bounds loading or saving a stored table.
const storeTimeout = time.Minute

// load returns the table's stored symbols (nil when there is no store;
// none when they cannot be read: every file is parsed then), and false
// when ctx ended first (the next Build reads them).
func (t *Table) load(ctx context.Context) (map[string]storedFile, bool) {
	if t.store == nil {
		return nil, true
	}
	loading, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	data, err := t.store.Load(loading)
	if err == nil {
		var stored map[string]storedFile
		if stored, err = decodeTable(data); err == nil {
			return stored, true
		}
	}
	switch {
	case ctx.Err() != nil:
		return nil, false
	case !errors.Is(err, fs.ErrNotExist):
		t.log.Warn("symbols: the stored table is unreadable; parsing every file", "error", err)
	}
	return map[string]storedFile{}, true // read once: the first build saves
}

// save stores what the table holds when files were parsed since the last
// save; it reports whether nothing is left unsaved.
func (t *Table) save(ctx context.Context) bool {
	if t.store == nil || t.unsaved == 0 {
		return true
	}
	started := time.Now()
	data, err := encodeTable(t.held)
	if err == nil {
		saving, cancel := context.WithTimeout(ctx, storeTimeout)
		defer cancel()
		err = t.store.Save(saving, data)
	}
	if err != nil {
		t.log.Warn("symbols: saving the table failed; the next call tries again", "error", err)
		return false
	}
	t.unsaved = 0
	t.log.Info("symbols: table saved", "files", len(t.held), "bytes", len(data), "took_ms", time.Since(started).Milliseconds())
	return true
}

// publish makes what the table holds (and unread) its state, and tells
// the view what the table holds now. (The caller holding turn alone
// writes held: it reads it without the lock.)
func (t *Table) publish(unread []unreadFile, p Progress) {
	st := &State{Progress: p, files: make(map[string]*File, len(t.held)), unread: unread}
	bytes := int64(len(t.held)) * perFile
	for path, h := range t.held {
		st.files[path] = h.file
		bytes += int64(cap(h.file.Symbols)) * int64(unsafe.Sizeof(Symbol{}))
		for i, s := range h.file.Symbols {
			lower := strings.ToLower(s.Name)
			st.names = append(st.names, nameRef{lower: lower, file: h.file, i: int32(i)})
			bytes += int64(len(s.Name) + len(s.Container))
			if lower != s.Name {
				bytes += int64(len(lower))
			}
		}
	}
	bytes += int64(cap(st.names)) * int64(unsafe.Sizeof(nameRef{}))
	slices.SortFunc(st.names, func(a, b nameRef) int { return strings.Compare(a.lower, b.lower) })
	st.Progress.Symbols = len(st.names)
	t.state.Store(st)
	t.hold(bytes)
}

// perFile is what a table takes for each file beside its symbols: the
// File, and its entries in the state's map and in run's.
const perFile = int64(unsafe.Sizeof(File{})) + 2*mapEntry + int64(unsafe.Sizeof(parsed{}))

// mapEntry is about what an entry keyed by a string takes in a map: the
// key, a pointer, and the map's own share.
const mapEntry = 40

// hold tells the view that the table holds bytes for it now (an estimate:
// its symbols, names and files; the names and containers counted as
// copies of their own, which those of most files are).
func (t *Table) hold(bytes int64) {
	if bytes != t.holding {
		t.view.Hold(bytes - t.holding)
		t.holding = bytes
	}
}

// File returns the symbols of the file at p, or nil when the table has
// none (not parsed yet, not searchable, or in a language this build does
// not read).
func (st *State) File(p string) *File { return st.files[p] }

// Match says how a name is compared.
type Match string

// Ways to match a name.
const (
	Exact     Match = "exact"
	Prefix    Match = "prefix"
	Substring Match = "substring"
)

// Query is a lookup by name.
type Query struct {
	Name          string
	Match         Match
	CaseSensitive bool
	Kinds         []Kind                 // any of them; all when empty
	Keep          func(path string) bool // which files to look in; all when nil
}

// Hit is one symbol a lookup found.
type Hit struct {
	File   *File
	Symbol Symbol
	// Rank orders hits: 0 the name exactly, 1 the name in another case,
	// 2 a name it starts, 3 a name it is in.
	Rank int
}

// Find returns the symbols q finds, by rank, path and position. It stops
// with ctx's error when ctx ends.
func (st *State) Find(ctx context.Context, q Query) ([]Hit, error) {
	lq := strings.ToLower(q.Name)
	candidates := st.names
	if q.Match != Substring {
		// Names that start with the query (in any case) are consecutive.
		from, _ := slices.BinarySearchFunc(st.names, lq, func(n nameRef, lq string) int { return strings.Compare(n.lower, lq) })
		to := from
		for to < len(st.names) && strings.HasPrefix(st.names[to].lower, lq) {
			to++
		}
		candidates = st.names[from:to]
	}
	var hits []Hit
	kept := map[*File]bool{}
	for i, n := range candidates {
		if i%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !strings.Contains(n.lower, lq) {
			continue
		}
		s := n.file.Symbols[n.i]
		rank := q.rank(s.Name, n.lower, lq)
		if rank < 0 || len(q.Kinds) > 0 && !slices.Contains(q.Kinds, s.Kind) {
			continue
		}
		keep, seen := kept[n.file]
		if !seen {
			keep = q.Keep == nil || q.Keep(n.file.Path)
			kept[n.file] = keep
		}
		if keep {
			hits = append(hits, Hit{File: n.file, Symbol: s, Rank: rank})
		}
	}
	slices.SortFunc(hits, CompareHits)
	return hits, nil
}

// rank returns how name (lower-cased: lower) matches the query (lq), or
// -1 when it does not.
func (q Query) rank(name, lower, lq string) int {
	same := !q.CaseSensitive || strings.Contains(name, q.Name)
	switch {
	case name == q.Name:
		return 0
	case !same:
		return -1
	case lower == lq:
		return 1
	case q.Match == Exact:
		return -1
	case strings.HasPrefix(lower, lq) && (!q.CaseSensitive || strings.HasPrefix(name, q.Name)):
		return 2
	case q.Match == Prefix:
		return -1
	}
	return 3
}

// CompareHits orders hits by rank, then path, then position: where the
// symbol starts, then where its name is (names declared together, as in
// `var a, b` or `int a, b;`, share their start), then where it ends. No
// two symbols of a file share all three, so the order is total and a page
// can resume after any hit.
func CompareHits(a, b Hit) int {
	if a.Rank != b.Rank {
		return a.Rank - b.Rank
	}
	if c := strings.Compare(a.File.Path, b.File.Path); c != 0 {
		return c
	}
	if a.Symbol.From != b.Symbol.From {
		return a.Symbol.From - b.Symbol.From
	}
	if a.Symbol.NameAt != b.Symbol.NameAt {
		return a.Symbol.NameAt - b.Symbol.NameAt
	}
	return a.Symbol.To - b.Symbol.To
}
