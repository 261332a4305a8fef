package contextindex

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolshed/toolshed/shared/codechunk"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/symbols"
)

// State is how far an index is, as context_search and list_repos report
// it.
type State string

// The states of a live index (context_search and package wiring add
// theirs for an index being read and a repository without one).
const (
	StateBuilding State = "building"
	StateReady    State = "ready"
)

// Tuning of a live index.
const (
	// liveBatchFiles is how many files a build cuts into one part, on
	// every core a batch at a time, publishing each as it is added, so
	// searches see the index grow.
	liveBatchFiles = 400
	// Parts are merged as they come (see mergeFrom) into parts of at most
	// a maxPartShare of the index's chunks (and minPartChunks): a merge
	// holds its parts and their merged copy at once, and a merge into one
	// part of five copies of the Go tree took 200 MB more at its peak. A
	// search then looks its terms up in a few parts, each with its own
	// dictionary.
	maxPartShare  = 2
	minPartChunks = 1 << 16
	// defaultSaveAfter is how long a changed index waits before it is
	// saved unless told (more changes in the meantime are saved together).
	defaultSaveAfter = 30 * time.Second
	// progressEvery is how often a build logs how far it is.
	progressEvery = 5 * time.Second
)

// Progress says how far an index is.
type Progress struct {
	State        State // StateBuilding or StateReady
	FilesIndexed int   // files whose chunks are searchable
	FilesTotal   int   // searchable files of the view
	Chunks       int   // searchable chunks
	// Version is the view's version the index shows once ready.
	Version uint64
}

// LiveState is one state of a live index. It never changes: a search
// takes the current one and ranks over it.
type LiveState struct {
	Parts    []Part
	Vectors  *Vectors // nil without an embedder
	Progress Progress

	collOnce sync.Once
	coll     *Collection
}

// Collection returns the state's code as a collection, made once and
// shared by every search of this state (nil when there is no code yet).
func (st *LiveState) Collection() *Collection {
	st.collOnce.Do(func() {
		model := ""
		if st.Vectors != nil {
			model = st.Vectors.Model
		}
		st.coll = NewCollection(model, st.Parts, st.Vectors)
	})
	return st.coll
}

// LiveOptions configure NewLive.
type LiveOptions struct {
	// Store keeps the index between runs under Key (nil: not kept).
	Store LiveStore
	Key   string
	// Embedder makes the chunks' vectors, in the background (nil:
	// lexical only).
	Embedder Embedder
	// SaveAfter is how long a changed index waits before it is saved
	// (0: 30 s).
	SaveAfter time.Duration
	// Parses gives the one parse of each of the view's files, which the
	// index cuts the file at: the view's symbol table's, shared with every
	// other reader of its symbols (nil: the index parses its files itself,
	// for a view no symbol table follows).
	Parses Parses
	Log    *slog.Logger
	Now    func() time.Time
}

// Parses is where a live index takes the parse of each file of its view
// from: the view's symbol table (shared/symbols.Table).
type Parses interface {
	// Parsed returns the symbols of f, a searchable file of the view at
	// version v (or a later one), once parsed (nil when shared/symbols
	// reads no symbols in the file), or false when ctx ends first.
	Parsed(ctx context.Context, f *repo.File, v uint64) (*symbols.File, bool)
}

// Live keeps the code index of one repository view current for every
// tenant that reads the view: it loads the index an earlier run stored,
// indexes in the background what is missing or changed (publishing as it
// goes, so searches answer from what is indexed so far), then follows the
// view's change feed, re-cutting only the files that changed. Parts made
// along the way are merged when there are too many; the index is saved a
// while after it changes. With an embedder, chunks get their vectors in
// the background and searches rank lexically until they do.
type Live struct {
	view repo.View
	o    LiveOptions

	state atomic.Pointer[LiveState]
	mu    sync.Mutex // publishes: code (run) and vectors (embed) are set apart
	code  []Part
	prog  Progress
	vecs  *Vectors

	embedWake chan struct{}
	embedding atomic.Bool // a round of embedding runs
	toEmbed   atomic.Bool // the code changed since the last round began
	// stop ends the background work, closing stopped (the Done channel
	// of the context it runs with).
	stop    context.CancelFunc
	stopped <-chan struct{}
	wg      sync.WaitGroup

	// Builds counts the files cut into chunks, Loads the stored indexes
	// read (for tests and logs: an idle index does neither); Parses, the
	// files it parsed itself, without Parses (for tests: with it, none).
	Builds, Loads, Parses atomic.Int64
}

// NewLive starts keeping view's code index. Close stops it.
func NewLive(view repo.View, o LiveOptions) *Live {
	ctx, l := newLive(view, o)
	l.wg.Go(func() { l.run(ctx) })
	if o.Embedder != nil {
		l.wg.Go(func() { l.embed(ctx) })
	}
	return l
}

// StoppedLive returns a code index of view that never starts (no
// goroutine, no store read): it holds nothing, building. It is what a
// caller gets that holds a view its source no longer serves, or asks once
// the indexes are closed.
func StoppedLive(view repo.View) *Live {
	_, l := newLive(view, LiveOptions{})
	l.stop()
	return l
}

// newLive returns view's code index, empty, not started, and the context
// its work runs with (ended by Close).
func newLive(view repo.View, o LiveOptions) (context.Context, *Live) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SaveAfter <= 0 {
		o.SaveAfter = defaultSaveAfter
	}
	ctx, stop := context.WithCancel(context.Background())
	l := &Live{view: view, o: o, embedWake: make(chan struct{}, 1), stop: stop, stopped: ctx.Done()}
	if o.Embedder != nil {
		l.vecs = NewVectors(o.Embedder.Model())
	}
	l.prog.State = StateBuilding
	l.publish()
	return ctx, l
}

// Close stops the index's background work (saving what is unsaved) and
// waits for it.
func (l *Live) Close() {
	l.stop()
	l.wg.Wait()
}

// Embedding reports whether chunks wait for their vectors: a round of
// embedding runs, or the code changed since the last one began (false
// without an embedder, and once embedding failed: those chunks stay
// ranked by their words).
func (l *Live) Embedding() bool {
	return l.o.Embedder != nil && (l.embedding.Load() || l.toEmbed.Load())
}

// Settle waits until the index shows the view as it is now (and, with an
// embedder, every chunk has its vector or embedding failed), or until Close.
func (l *Live) Settle() {
	for {
		st := l.State()
		done := st.Progress.State == StateReady && st.Progress.Version == l.view.Version()
		if l.o.Embedder != nil {
			done = done && !l.embedding.Load() && !l.toEmbed.Load()
		}
		if done {
			return
		}
		select {
		case <-l.stopped:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// State returns the current state.
func (l *Live) State() *LiveState { return l.state.Load() }

// publish makes the code and vectors in hand the current state, its
// collection made here, in the background, so that no search pays for it
// (or goes on making it after its call was abandoned).
func (l *Live) publish() {
	st := &LiveState{Parts: slices.Clip(l.code), Vectors: l.vecs, Progress: l.prog}
	st.Collection()
	l.state.Store(st)
}

// indexed is what the index holds of one file.
type indexed struct {
	file   *repo.File // the view's file it was cut from (nil: from the stored index)
	hash   [32]byte   // SHA-256 of its content
	part   int        // the part holding it
	number int        // its number among that part's files
	chunks int        // how many chunks it has
}

// builder is the run loop's own state.
type builder struct {
	l     *Live
	parts []Part
	// stored names each part's segment in the store ("" until it is
	// saved).
	stored []string
	files  map[string]*indexed
	saved  bool // the index in the store is the one in hand
	// version is the view's version being indexed.
	version uint64
	// built: the first build is done; later ones are updates.
	built bool
	// restored: the index started from the one in the store; loaded:
	// the parts read from the store have the text of the blocks they were
	// decoded from, until rebase lets them go.
	restored, loaded bool
	// listed is the view's files as the last update saw them.
	listed map[string]*repo.File
	// chunks counts the chunks of the files indexed.
	chunks int
	// The sets of vectors in the store, how many vectors they hold, and
	// how many of the vectors in hand (in the order they were added) they
	// hold.
	vectorSets                  []string
	vectorsStored, vectorsSaved int
	// next numbers the next name of a segment or set of vectors.
	next int
}

// run builds the index, then follows the view until Close (which cancels
// ctx).
func (l *Live) run(ctx context.Context) {
	b := &builder{l: l, files: map[string]*indexed{}}
	b.load(ctx)
	var saveAt <-chan time.Time
	for {
		v, files, ok := repo.LatestSearchable(ctx, l.view, l.o.Log, "context index")
		if !ok {
			return
		}
		if changed := b.update(ctx, files, v); changed || !b.saved && saveAt == nil {
			b.saved = false
			saveAt = time.After(l.o.SaveAfter)
		}
		if ctx.Err() != nil {
			b.save(ctx) // closing: keep what is built, done or not
			return
		}
		select {
		case <-l.view.Changed(v):
		case <-saveAt:
			saveAt = nil
			b.save(ctx)
		case <-ctx.Done():
			b.save(ctx)
			return
		}
	}
}

// load starts from the index an earlier run stored, if any.
func (b *builder) load(ctx context.Context) {
	st := b.l.o.Store
	if st == nil {
		return
	}
	rec, parts, vectors, err := st.LoadLive(ctx, b.l.o.Key)
	switch {
	case errors.Is(err, fs.ErrNotExist): // none yet, or one of an older format
		b.l.o.Log.Info("context index: nothing stored to start from; building", "key", b.l.o.Key, "reason", err)
		return
	case err != nil:
		b.l.o.Log.Warn("context index: the stored index cannot be read; building anew", "key", b.l.o.Key, "error", err)
		return
	}
	b.l.Loads.Add(1)
	for pi, part := range parts {
		code := part.Seg.code
		for fi, r := range code.fileChunks() {
			if part.Dead == nil || !part.Dead[fi] {
				b.files[code.files[fi].path] = &indexed{hash: code.files[fi].hash, part: pi, number: fi, chunks: r[1] - r[0]}
				b.chunks += r[1] - r[0]
			}
		}
	}
	b.parts, b.loaded, b.restored, b.saved = parts, true, true, true
	for _, stored := range rec.Segments {
		b.stored = append(b.stored, stored.Name)
	}
	for _, name := range rec.names() {
		if n, ok := strings.CutPrefix(name, storedPrefix); ok {
			if i, err := strconv.Atoi(n); err == nil {
				b.next = max(b.next, i+1)
			}
		}
	}
	b.l.mu.Lock()
	b.l.code = slices.Clone(b.parts)
	b.l.prog = Progress{State: StateBuilding, FilesIndexed: len(b.files), FilesTotal: len(b.files), Chunks: b.chunks}
	if b.l.vecs != nil && vectors != nil && vectors.Model == b.l.vecs.Model {
		b.l.vecs = vectors
		b.vectorSets = rec.Vectors
		b.vectorsStored, b.vectorsSaved = vectors.Len(), vectors.Len()
	}
	b.l.publish()
	b.l.mu.Unlock()
	b.l.o.Log.Info("context index: serving the stored index while it catches up", "key", b.l.o.Key, "files", len(b.files),
		"chunks", b.chunks, "segments", len(parts))
}

// update brings the index to the view's files: the files that are new or
// whose content changed are cut again, in batches published as they are
// done; the chunks of changed and removed files are left out. It reports
// whether the index changed.
func (b *builder) update(ctx context.Context, files []*repo.File, version uint64) bool {
	b.version = version
	started := time.Now()
	present := make(map[string]bool, len(files))
	// The files to cut: first those that changed since the last update
	// began (a file written during a build is searchable as soon as one
	// batch is cut), then the others in walk order.
	var changed, todo []*repo.File
	loaded := map[string]*repo.File{} // unchanged files whose chunks were loaded
	listed := make(map[string]*repo.File, len(files))
	for _, f := range files {
		present[f.Path] = true
		listed[f.Path] = f
		ix := b.files[f.Path]
		switch {
		case ix != nil && ix.file == f:
		case ix != nil && ix.hash == f.Hash():
			if ix.file == nil {
				loaded[f.Path] = f
			}
			ix.file = f
		case b.listed != nil && b.listed[f.Path] != f:
			changed = append(changed, f)
		default:
			todo = append(todo, f)
		}
	}
	b.listed = listed
	todo = append(changed, todo...)
	b.rebase(loaded)
	var removed []string
	for p := range b.files {
		if !present[p] {
			removed = append(removed, p)
		}
	}
	if len(todo) == 0 && len(removed) == 0 {
		if !b.built {
			b.finish(len(files), started, 0)
		}
		return false
	}
	for _, p := range removed {
		b.drop(p)
	}
	// A build, or an update of many files, is published as it goes; a
	// small update at once, when done.
	large := !b.built || len(todo) > liveBatchFiles
	if large {
		b.publish(StateBuilding, len(files)-len(todo), len(files))
	}
	if !b.cut(ctx, todo, len(files), large) {
		return true // stopping, or the view changed: the next update goes on
	}
	b.finish(len(files), started, len(todo))
	return true
}

// cut adds todo's files in batches cut on every core, publishing each
// batch when large (of total files), and logging how far it is every
// progressEvery. It reports false when it stopped early: the index is
// closing, or the view changed (the next update cuts what changed first).
func (b *builder) cut(ctx context.Context, todo []*repo.File, total int, large bool) bool {
	started, logged := time.Now(), time.Now()
	if large {
		b.l.o.Log.Info("context index: cutting files into chunks", "key", b.l.o.Key, "files", total, "to_cut", len(todo))
	}
	batches := (len(todo) + liveBatchFiles - 1) / liveBatchFiles
	batch := func(i int) []*repo.File { return todo[i*liveBatchFiles : min((i+1)*liveBatchFiles, len(todo))] }
	err := inOrder(ctx, batches, func(i int) *Segment { return b.l.cutFiles(ctx, batch(i), b.version) }, func(i int, seg *Segment) error {
		if seg == nil {
			return errNotCut
		}
		b.add(batch(i), seg)
		if from := mergeFrom(b.parts, b.maxPartChunks()); from < len(b.parts) {
			b.merge(from)
		}
		end := min((i+1)*liveBatchFiles, len(todo))
		if large && end < len(todo) {
			b.publish(StateBuilding, total-len(todo)+end, total)
		}
		if large && time.Since(logged) >= progressEvery {
			logged = time.Now()
			rate := float64(end) / time.Since(started).Seconds()
			b.l.o.Log.Info("context index: building", "key", b.l.o.Key, "files_indexed", total-len(todo)+end, "files", total,
				"chunks", b.chunks, "files_per_s", int(rate), "left_s", int(float64(len(todo)-end)/rate))
		}
		if batchAdded != nil {
			batchAdded()
		}
		if end < len(todo) && b.l.view.Version() != b.version {
			return errViewChanged
		}
		return nil
	})
	return err == nil
}

// batchAdded, when set (by tests), is called after each batch a build
// adds.
var batchAdded func()

// errViewChanged stops a build to take the view's changes first.
var errViewChanged = errors.New("the repository view changed")

// errNotCut stops a build whose files' parses did not come: the index is
// closing, or its view is done.
var errNotCut = errors.New("the files were not cut: their parses did not come")

// finish marks the index ready. The parts of a build from nothing are
// merged into as few as keep within maxPartChunks; later, the parts are
// merged into one when the chunks left out of them grow past a quarter
// of them.
func (b *builder) finish(total int, started time.Time, cut int) {
	first := !b.built
	b.built = true
	switch {
	case b.deadShare() > 0.25:
		b.merge(0)
	case first && !b.restored:
		from := len(b.parts)
		for tail := 0; from > 0 && tail+b.parts[from-1].Seg.Len() <= b.maxPartChunks(); from-- {
			tail += b.parts[from-1].Seg.Len()
		}
		b.merge(from)
	}
	b.publish(StateReady, total, total)
	if first || cut > liveBatchFiles {
		took := time.Since(started)
		b.l.o.Log.Info("context index ready", "key", b.l.o.Key, "files", total, "cut", cut, "chunks", b.chunks, "parts", len(b.parts),
			"files_per_s", int(float64(cut)/max(took.Seconds(), 0.001)), "took_ms", took.Milliseconds())
		// A build leaves hundreds of megabytes of garbage (tokenizer
		// maps, merged parts, the text read from the store): give the
		// memory back now, not over the next minutes.
		debug.FreeOSMemory()
	}
}

// maxPartChunks is how many chunks a merge may make a part hold.
func (b *builder) maxPartChunks() int { return max(b.chunks/maxPartShare, minPartChunks) }

// cutFiles cuts files, of the view at version v, into chunks at their
// parses (Parses'; without it, the index's own) and returns their
// segment; nil when a parse did not come (ctx ended, or the view is done).
func (l *Live) cutFiles(ctx context.Context, files []*repo.File, v uint64) *Segment {
	parses, ok := l.parses(ctx, files, v)
	if !ok {
		return nil
	}
	cb := newCodeBuilder()
	for i, f := range files {
		text := f.Text()
		var cut []codechunk.Chunk
		if parses != nil {
			cut = codechunk.Split(f.Path, text, parses[i])
		} else {
			cut = cutFile(f.Path, text)
			if symbols.Supports(f.Path) {
				l.Parses.Add(1)
			}
		}
		cb.addFile(f.Path, f.Hash(), f.ModTime, textSource{file: f}, cut)
	}
	return cb.segment()
}

// parses returns Parses' parse of each of files (of the view at version
// v), or nil without Parses (each file is parsed as it is cut); false
// when one did not come.
func (l *Live) parses(ctx context.Context, files []*repo.File, v uint64) ([]*symbols.File, bool) {
	if l.o.Parses == nil {
		return nil, true
	}
	out := make([]*symbols.File, len(files))
	for i, f := range files {
		p, ok := l.o.Parses.Parsed(ctx, f, v)
		if !ok {
			return nil, false
		}
		out[i] = p
	}
	return out, true
}

// add adds files as a new part, seg (cutFiles of them), leaving out the
// chunks they had before.
func (b *builder) add(files []*repo.File, seg *Segment) {
	pi := len(b.parts)
	ranges := seg.code.fileChunks()
	for i, f := range files {
		b.drop(f.Path)
		ix := &indexed{file: f, hash: seg.code.files[i].hash, part: pi, number: i, chunks: ranges[i][1] - ranges[i][0]}
		b.files[f.Path] = ix
		b.chunks += ix.chunks
	}
	b.l.Builds.Add(int64(len(files)))
	b.parts = append(b.parts, Part{Seg: seg})
	b.stored = append(b.stored, "")
}

// rebase lets the text decoded from the store go: the loaded chunks of
// files whose content is unchanged (files) take their text from the
// view's files; the others (of files that changed or went, soon left
// out) keep their own copy of the blocks they are in.
func (b *builder) rebase(files map[string]*repo.File) {
	if !b.loaded {
		return
	}
	for pi, p := range b.parts {
		b.parts[pi].Seg = p.Seg.withTexts(func(path string) (*repo.File, bool) {
			f := files[path]
			return f, f != nil
		})
	}
	b.loaded = false
}

// drop leaves out one file and its chunks.
func (b *builder) drop(p string) {
	ix := b.files[p]
	if ix == nil {
		return
	}
	delete(b.files, p)
	b.chunks -= ix.chunks
	part := &b.parts[ix.part]
	// Copy on write: published states share the mask.
	dead := make([]bool, part.Seg.Files())
	copy(dead, part.Dead)
	dead[ix.number] = true
	part.Dead = dead
}

// deadShare is the share of the parts' chunks that are left out.
func (b *builder) deadShare() float64 {
	total := 0
	for _, p := range b.parts {
		total += p.Seg.Len()
	}
	if total == 0 {
		return 0
	}
	return float64(total-b.chunks) / float64(total)
}

// merge joins the parts from index from on into one, without their dead
// files.
func (b *builder) merge(from int) {
	if from >= len(b.parts) || from == len(b.parts)-1 && b.parts[from].Dead == nil {
		return
	}
	merged := MergeSegments(b.parts[from:])
	// number[pi][fi]: file fi of part pi has this number in the merged part.
	number := make([][]int, len(b.parts))
	n := 0
	for pi := from; pi < len(b.parts); pi++ {
		p := b.parts[pi]
		number[pi] = make([]int, p.Seg.Files())
		for fi := range number[pi] {
			number[pi][fi] = n
			if p.Dead == nil || !p.Dead[fi] {
				n++
			}
		}
	}
	for _, ix := range b.files {
		if ix.part >= from {
			ix.part, ix.number = from, number[ix.part][ix.number]
		}
	}
	n = len(b.parts)
	b.parts = append(b.parts[:from], Part{Seg: merged})
	clear(b.parts[from+1 : n]) // the array keeps them otherwise
	b.stored = append(b.stored[:from], "")
}

// publish makes the parts in hand the live index's code.
func (b *builder) publish(state State, indexed, total int) {
	l := b.l
	l.mu.Lock()
	l.code = slices.Clone(b.parts)
	l.prog = Progress{State: state, FilesIndexed: indexed, FilesTotal: total, Chunks: b.chunks, Version: b.version}
	l.publish()
	l.mu.Unlock()
	if l.o.Embedder != nil {
		l.toEmbed.Store(true)
		select {
		case l.embedWake <- struct{}{}:
		default:
		}
	}
}

// save stores what the store lacks of the index for the next run: the
// parts made since the last save (new files, and the parts merged since),
// the vectors added since, then the pointer with each part's dead files.
// What an edit adds is then about what the next save writes. The folders
// the pointer no longer names are removed after it is written: a crash
// in between leaves the index the last pointer names whole.
func (b *builder) save(ctx context.Context) {
	st := b.l.o.Store
	if st == nil || b.saved || len(b.parts) == 0 {
		return
	}
	// A save is finished even when closing: it is what the next run
	// starts from.
	ctx, key := context.WithoutCancel(ctx), b.l.o.Key
	hashes := make(map[string]string, len(b.files))
	for path, f := range b.files {
		hashes[path] = hex.EncodeToString(f.hash[:])
	}
	rec := SavedLive{Version: version(hashes), BuiltAt: b.l.o.Now().UTC(), Chunks: b.chunks}
	for i, part := range b.parts {
		if b.stored[i] == "" {
			name := b.name()
			if err := st.SaveSegment(ctx, key, name, part.Seg); err != nil {
				b.l.o.Log.Warn("context index: saving failed", "key", key, "error", err)
				return
			}
			b.stored[i] = name
		}
		stored := SavedSegment{Name: b.stored[i]}
		for f, dead := range part.Dead {
			if dead {
				stored.Dead = append(stored.Dead, f)
			}
		}
		rec.Segments = append(rec.Segments, stored)
	}
	if err := b.saveVectors(ctx, &rec); err != nil {
		b.l.o.Log.Warn("context index: saving vectors failed", "key", key, "error", err)
		return
	}
	if err := st.SaveLive(ctx, key, rec); err != nil {
		b.l.o.Log.Warn("context index: saving failed", "key", key, "error", err)
		return
	}
	if err := st.Prune(key, rec); err != nil {
		b.l.o.Log.Warn("context index: removing what the index no longer uses failed", "key", key, "error", err)
	}
	b.saved = true
}

// saveVectors saves the vectors added since the last save as a new set,
// or, once the sets stored hold more than twice the vectors the chunks
// use, those vectors as one set; rec gets the sets.
func (b *builder) saveVectors(ctx context.Context, rec *SavedLive) error {
	v := b.l.State().Vectors
	if v == nil || v.Len() == 0 {
		return nil
	}
	st, key := b.l.o.Store, b.l.o.Key
	switch {
	case b.vectorsStored+v.Len()-b.vectorsSaved > 2*b.chunks:
		var hashes []string
		for _, part := range b.parts {
			for i, h := range part.Seg.hashes() {
				if !part.dead(i) {
					hashes = append(hashes, h)
				}
			}
		}
		set, name := v.Subset(hashes), b.name()
		if err := st.SaveVectors(ctx, key, name, set); err != nil {
			return err
		}
		b.vectorSets, b.vectorsStored = []string{name}, set.Len()
	case v.Len() > b.vectorsSaved:
		name := b.name()
		if err := st.SaveVectors(ctx, key, name, v.from(b.vectorsSaved)); err != nil {
			return err
		}
		b.vectorSets = append(b.vectorSets, name)
		b.vectorsStored += v.Len() - b.vectorsSaved
	}
	b.vectorsSaved = v.Len()
	rec.Model, rec.Vectors = v.Model, slices.Clone(b.vectorSets)
	return nil
}

// storedPrefix starts the names of the segments and sets of vectors a
// live index stores.
const storedPrefix = "live-"

// name returns a name for a new segment or set of vectors.
func (b *builder) name() string {
	b.next++
	return fmt.Sprintf("%s%06d", storedPrefix, b.next-1)
}

// embed gives the chunks their vectors, in the background, whenever the
// code changed, until Close (which cancels ctx).
func (l *Live) embed(ctx context.Context) {
	for {
		select {
		case <-l.embedWake:
		case <-ctx.Done():
			return
		}
		l.embedding.Store(true)
		l.toEmbed.Store(false)
		err := l.embedTexts(ctx, missingTexts(l.State()))
		l.embedding.Store(false)
		if err != nil && !errors.Is(err, context.Canceled) {
			l.o.Log.Warn("context index: embedding chunks failed; searches rank them lexically", "key", l.o.Key, "error", err)
		}
	}
}

// embedRound is how many texts the embedding pass adds before it publishes
// them.
const embedRound = 1024

// missingTexts returns the texts of the live chunks of st that have no
// vector in it (Part.textsWithoutVectors: a part whose chunks all have one
// is not read, and a round runs after every batch of a build and every
// edit).
func missingTexts(st *LiveState) []string {
	var texts []string
	for _, p := range st.Parts {
		texts = append(texts, p.textsWithoutVectors(st.Vectors)...)
	}
	return texts
}

// embedTexts embeds todo, publishing the vectors every embedRound texts.
func (l *Live) embedTexts(ctx context.Context, todo []string) error {
	for start := 0; start < len(todo); start += embedRound {
		next := l.State().Vectors.Clone()
		n, err := next.EmbedMissing(ctx, l.o.Embedder, todo[start:min(start+embedRound, len(todo))], EmbedBatch)
		if n > 0 {
			l.mu.Lock()
			l.vecs = next
			l.publish()
			l.mu.Unlock()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Clone returns a copy of the set that can take more vectors without
// changing v (the vectors themselves are shared).
func (v *Vectors) Clone() *Vectors {
	return &Vectors{Model: v.Model, Dims: v.Dims, rows: maps.Clone(v.rows), keys: slices.Clip(v.keys), data: slices.Clip(v.data)}
}
