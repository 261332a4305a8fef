package contextindex

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolshed/toolshed/shared/codechunk"
	"github.com/toolshed/toolshed/shared/repo"
)

// Index states, as context_search reports them.
const (
	StateBuilding = "building"
	StateReady    = "ready"
)

// Tuning of a live index.
const (
	// liveBatchFiles is how many files a build cuts into one part, on
	// every core a batch at a time, publishing each as it is added, so
	// searches see the index grow.
	liveBatchFiles = 400
	// saveAfter is how long a changed index waits before it is saved (more
	// changes in the meantime are saved together).
	saveAfter = 30 * time.Second
	// progressEvery is how often a build logs how far it is.
	progressEvery = 5 * time.Second
)

// Progress says how far an index is.
type Progress struct {
	State        string // StateBuilding or StateReady
	FilesIndexed int    // files whose chunks are searchable
	FilesTotal   int    // searchable files of the view
	Chunks       int    // searchable chunks
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
	Store *Store
	Key   string
	// Embedder makes the chunks' vectors, in the background (nil:
	// lexical only).
	Embedder Embedder
	Log      *slog.Logger
	Now      func() time.Time
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
	stop      chan struct{}
	closing   sync.Once
	wg        sync.WaitGroup

	// Builds counts the files cut into chunks, Loads the stored indexes
	// read (for tests and logs: an idle index does neither).
	Builds, Loads atomic.Int64
}

// NewLive starts keeping view's code index. Close stops it.
func NewLive(view repo.View, o LiveOptions) *Live {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	l := &Live{view: view, o: o, embedWake: make(chan struct{}, 1), stop: make(chan struct{})}
	if o.Embedder != nil {
		l.vecs = NewVectors(o.Embedder.Model())
	}
	l.prog.State = StateBuilding
	l.publish()
	l.wg.Go(l.run)
	if o.Embedder != nil {
		l.wg.Go(l.embed)
	}
	return l
}

// Close stops the index's background work (saving what is unsaved) and
// waits for it.
func (l *Live) Close() {
	l.closing.Do(func() { close(l.stop) })
	l.wg.Wait()
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
		case <-l.stop:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// State returns the current state.
func (l *Live) State() *LiveState { return l.state.Load() }

// publish makes the code and vectors in hand the current state.
func (l *Live) publish() {
	l.state.Store(&LiveState{Parts: slices.Clip(l.code), Vectors: l.vecs, Progress: l.prog})
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
	files map[string]*indexed
	saved bool // the index in the store is the one in hand
	ctx   context.Context
	// version is the view's version being indexed.
	version uint64
	// built: the first build is done; later ones are updates.
	built bool
	// loaded is the segment read from the store until rebase lets the
	// text it was decoded with go.
	loaded *Segment
	// listed is the view's files as the last update saw them.
	listed map[string]*repo.File
	// chunks counts the chunks of the files indexed.
	chunks int
}

// run builds the index, then follows the view until Close.
func (l *Live) run() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-l.stop
		cancel()
	}()
	b := &builder{l: l, files: map[string]*indexed{}, ctx: ctx}
	b.load()
	var saveAt <-chan time.Time
	for {
		v := l.view.Version()
		files, err := l.view.Searchable(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			l.o.Log.Warn("context index: reading the repository failed; retrying", "error", err)
			select {
			case <-time.After(5 * time.Second):
				continue
			case <-l.stop:
				return
			}
		}
		if changed := b.update(files, v); changed || !b.saved && saveAt == nil {
			b.saved = false
			saveAt = time.After(saveAfter)
		}
		if ctx.Err() != nil {
			b.save() // closing: keep what is built, done or not
			return
		}
		select {
		case <-l.view.Changed(v):
		case <-saveAt:
			saveAt = nil
			b.save()
		case <-l.stop:
			if !b.saved {
				b.save()
			}
			return
		}
	}
}

// load starts from the index an earlier run stored, if any.
func (b *builder) load() {
	st := b.l.o.Store
	if st == nil {
		return
	}
	ix, err := st.CurrentCode(b.ctx, b.l.o.Key)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return
	case err != nil:
		b.l.o.Log.Warn("context index: the stored index cannot be read; building anew", "key", b.l.o.Key, "error", err)
		return
	}
	b.l.Loads.Add(1)
	code := ix.Segment.code
	for fi, r := range code.fileChunks() {
		f := code.files[fi]
		b.files[f.path] = &indexed{hash: f.hash, part: 0, number: fi, chunks: r[1] - r[0]}
	}
	b.chunks = code.len()
	b.parts = []Part{{Seg: ix.Segment}}
	b.saved = true
	b.loaded = ix.Segment
	b.l.mu.Lock()
	b.l.code = slices.Clone(b.parts)
	b.l.prog = Progress{State: StateBuilding, FilesIndexed: len(ix.Files), FilesTotal: len(ix.Files), Chunks: code.len()}
	if b.l.vecs != nil && ix.Vectors != nil && ix.Vectors.Model == b.l.vecs.Model {
		b.l.vecs = ix.Vectors
	}
	b.l.publish()
	b.l.mu.Unlock()
	b.l.o.Log.Info("context index: serving the stored index while it catches up", "key", b.l.o.Key, "files", len(ix.Files), "chunks", code.len())
}

// update brings the index to the view's files: the files that are new or
// whose content changed are cut again, in batches published as they are
// done; the chunks of changed and removed files are left out. It reports
// whether the index changed.
func (b *builder) update(files []*repo.File, version uint64) bool {
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
		case ix != nil && ix.hash == sha256.Sum256(f.Data):
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
	if !b.cut(todo, len(files), large) {
		return true // stopping, or the view changed: the next update goes on
	}
	b.finish(len(files), started, len(todo))
	return true
}

// cut adds todo's files in batches cut on every core, publishing each
// batch when large (of total files), and logging how far it is every
// progressEvery. It reports false when it stopped early: the index is
// closing, or the view changed (the next update cuts what changed first).
func (b *builder) cut(todo []*repo.File, total int, large bool) bool {
	started, logged := time.Now(), time.Now()
	if large {
		b.l.o.Log.Info("context index: cutting files into chunks", "key", b.l.o.Key, "files", total, "to_cut", len(todo))
	}
	batches := (len(todo) + liveBatchFiles - 1) / liveBatchFiles
	batch := func(i int) []*repo.File { return todo[i*liveBatchFiles : min((i+1)*liveBatchFiles, len(todo))] }
	err := inOrder(b.ctx, batches, func(i int) *Segment { return cutFiles(batch(i)) }, func(i int, seg *Segment) error {
		b.add(batch(i), seg)
		if from := mergeFrom(b.parts); from < len(b.parts) {
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

// finish marks the index ready: after a build, its parts are merged into
// one; after an update, when the chunks left out of the parts grow past a
// quarter of them.
func (b *builder) finish(total int, started time.Time, cut int) {
	first := !b.built
	b.built = true
	if first || b.deadShare() > 0.25 {
		b.merge(0)
	}
	b.publish(StateReady, total, total)
	if first || cut > liveBatchFiles {
		took := time.Since(started)
		b.l.o.Log.Info("context index ready", "key", b.l.o.Key, "files", total, "cut", cut,
			"chunks", b.l.State().Progress.Chunks, "files_per_s", int(float64(cut)/max(took.Seconds(), 0.001)), "took_ms", took.Milliseconds())
		// A build leaves hundreds of megabytes of garbage (tokenizer
		// maps, merged parts, the text read from the store): give the
		// memory back now, not over the next minutes.
		debug.FreeOSMemory()
	}
}

// cutFiles cuts files into chunks and returns their segment.
func cutFiles(files []*repo.File) *Segment {
	cb := newCodeBuilder()
	for _, f := range files {
		cb.addFile(f.Path, sha256.Sum256(f.Data), f.ModTime, f.Text(), codechunk.Split(f.Path, f.Text()))
	}
	return cb.segment()
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
}

// rebase lets the text decoded from the store go: the loaded chunks of
// files whose content is unchanged (files) take their text from the
// view's copy of that content; the others (of files that changed or
// went, soon left out) keep their own copy of the blocks they are in.
func (b *builder) rebase(files map[string]*repo.File) {
	if b.loaded == nil {
		return
	}
	for pi, p := range b.parts {
		if p.Seg == b.loaded {
			b.parts[pi].Seg = p.Seg.withTexts(func(path string) (string, bool) {
				f := files[path]
				if f == nil {
					return "", false
				}
				return f.Text(), true
			})
		}
	}
	b.loaded = nil
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
}

// publish makes the parts in hand the live index's code.
func (b *builder) publish(state string, indexed, total int) {
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

// save stores the index (merged into one part) for the next run.
func (b *builder) save() {
	st := b.l.o.Store
	if st == nil || b.saved || len(b.parts) == 0 {
		return
	}
	if len(b.parts) != 1 || b.parts[0].Dead != nil {
		b.merge(0)
		b.publish(b.l.State().Progress.State, b.l.State().Progress.FilesIndexed, b.l.State().Progress.FilesTotal)
	}
	ix := &CodeIndex{BuiltAt: b.l.o.Now().UTC(), Segment: b.parts[0].Seg}
	ix.Files = ix.Segment.code.hashes()
	ix.Commit = version(ix.Files)
	if v := b.l.State().Vectors; v != nil {
		ix.Vectors = v.Subset(ix.Segment.hashes())
	}
	// A save is finished even when closing: it is what the next run
	// starts from.
	if err := st.SaveCode(context.WithoutCancel(b.ctx), b.l.o.Key, ix); err != nil {
		b.l.o.Log.Warn("context index: saving failed", "key", b.l.o.Key, "error", err)
		return
	}
	if err := st.Prune(b.l.o.Key, ix.Commit); err != nil {
		b.l.o.Log.Warn("context index: removing old indexes failed", "key", b.l.o.Key, "error", err)
	}
	b.saved = true
	debug.FreeOSMemory() // the encoded index was as large as the repository
}

// embed gives the chunks their vectors, in the background, whenever the
// code changed.
func (l *Live) embed() {
	for {
		select {
		case <-l.embedWake:
		case <-l.stop:
			return
		}
		l.embedding.Store(true)
		l.toEmbed.Store(false)
		st := l.State()
		var texts []string
		for _, p := range st.Parts {
			p.Seg.eachEmbedText(func(i int, text string) {
				if !p.dead(i) {
					texts = append(texts, text)
				}
			})
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-l.stop:
			case <-ctx.Done():
			}
			cancel()
		}()
		err := l.embedTexts(ctx, st.Vectors, texts)
		cancel()
		l.embedding.Store(false)
		if err != nil && !errors.Is(err, context.Canceled) {
			l.o.Log.Warn("context index: embedding chunks failed; searches rank them lexically", "key", l.o.Key, "error", err)
		}
	}
}

// embedRound is how many texts the embedding pass adds before it publishes
// them.
const embedRound = 1024

// embedTexts embeds the texts that have no vector in have, publishing the
// vectors every embedRound texts.
func (l *Live) embedTexts(ctx context.Context, have *Vectors, texts []string) error {
	var todo []string
	for _, t := range texts {
		if _, ok := have.Get(TextHash(t)); !ok {
			todo = append(todo, t)
		}
	}
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
