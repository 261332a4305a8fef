package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/toolshed/toolshed/shared/config"
)

// Defaults of LocalOptions.
const (
	DefaultPoll = 2 * time.Second
	// DefaultCompressAbove: the Go tree (120 MB) is held as it is, a
	// repository five times its size compressed.
	DefaultCompressAbove = 256 << 20
	// settle is how long a burst of file-system events may go on before
	// the view applies it (a request applies what is pending at once).
	settle = 20 * time.Millisecond
)

// LocalOptions configure NewLocal.
type LocalOptions struct {
	// Policy decides what the tools may see (nil: DefaultDeny alone).
	Policy *Policy
	// CacheBytes bounds the memory the view's file contents take, counted
	// with their folded copies and trigram filters; files beyond it are
	// read from disk at each search (0: DefaultCacheBytes).
	CacheBytes int64
	// CompressAbove is the size of the searchable files, in bytes, above
	// which the view holds their contents compressed (decided by the first
	// walk): a large repository then takes less than half its size in
	// memory, and a search reading most files takes two to three times
	// the CPU (0: DefaultCompressAbove).
	CompressAbove int64
	// Watch is config.WatchAuto (the default) or config.WatchPoll.
	Watch config.Watch
	// Poll is how often stat revalidation runs when there are no events;
	// at least ten times a revalidation's own duration (0: DefaultPoll).
	Poll time.Duration
	// Log reports the watch mode and its changes (nil: discard).
	Log *slog.Logger
}

// Local serves one directory to every tenant as one live View. Reads go
// through os.Root, so no symbolic link or ".." leaves the directory. The
// searchable files are walked once, in the background from NewLocal, and
// held in memory; file-system events (fsnotify, a watch per folder search
// sees) then bring each change in within moments. Where events are
// unavailable (a networked file system, more folders than the kernel lets
// a process watch, config.WatchPoll) or were lost (the kernel's event queue
// overflowed), the view revalidates by stat instead: it walks the tree and
// reads again only the files whose size or modification time changed.
type Local struct {
	policedFS // what tools read (Open, Stat, ReadDir and the rest): the directory as it is now, through os.Root and the policy

	dir     string // absolute
	root    *os.Root
	dirFile *os.File // the same directory, for noLinks
	raw     osFS     // the directory, unpoliced: the view's own walks
	o       LocalOptions
	log     *slog.Logger

	ready   chan struct{} // closed when the first walk is done
	initErr error

	mu       sync.Mutex
	dirs     map[string]*ignoreRules // folders search enters → rules in force inside
	files    map[string]*entry       // regular files search keeps, text or binary
	list     []*File                 // searchable files in walk order; nil: to rebuild
	cold     bool                    // some files are not held in memory
	walked   bool                    // the first walk has sized the tree
	compress bool                    // contents are held compressed (CompressAbove)
	warm     int64                   // memory the held contents take
	version  uint64
	next     chan struct{}          // closed at the next version
	dirty    bool                   // something changed since the version was last raised
	pending  map[string]fsnotify.Op // paths events named, not yet applied
	lost     bool                   // events were lost: revalidate everything
	watcher  *fsnotify.Watcher      // nil when polling
	polling  bool

	wake chan struct{} // an event is pending
	stop chan struct{}
	wg   sync.WaitGroup
}

var _ View = (*Local)(nil)

// entry is what the view knows of one file.
type entry struct {
	size int64
	mod  time.Time
	file *File // nil: binary, or cold
	cold bool  // text not held in memory (over CacheBytes)
}

// NewLocal opens dir and starts following it. Close releases it.
func NewLocal(dir string, o LocalOptions) (*Local, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("repository directory %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open repository directory: %w", err)
	}
	if o.Policy == nil {
		if o.Policy, err = NewPolicy(nil, ""); err != nil {
			root.Close()
			return nil, err
		}
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.CompressAbove <= 0 {
		o.CompressAbove = DefaultCompressAbove
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Watch == "" {
		o.Watch = config.WatchAuto
	}
	if o.Watch != config.WatchAuto && o.Watch != config.WatchPoll {
		root.Close()
		return nil, fmt.Errorf("watch mode %q: use %s or %s", o.Watch, config.WatchAuto, config.WatchPoll)
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dirFile, err := os.Open(abs)
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("open repository directory: %w", err)
	}
	raw := osRootFS(root)
	l := &Local{
		policedFS: localFS(raw, dirFile, o.Policy), dir: abs, root: root, dirFile: dirFile, raw: raw, o: o, log: log,
		ready: make(chan struct{}), next: make(chan struct{}), pending: map[string]fsnotify.Op{},
		dirs: map[string]*ignoreRules{}, files: map[string]*entry{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}),
		polling: o.Watch == config.WatchPoll,
	}
	l.wg.Go(l.run)
	return l, nil
}

// Close stops following the directory and releases it.
func (l *Local) Close() error {
	close(l.stop)
	l.wg.Wait()
	l.mu.Lock()
	if l.watcher != nil {
		l.watcher.Close()
		l.watcher = nil
	}
	l.mu.Unlock()
	l.dirFile.Close()
	return l.root.Close()
}

// Dir is the directory the view serves (absolute).
func (l *Local) Dir() string { return l.dir }

// Commit reads the commit HEAD names (the working tree may hold changes
// on top of it).
func (l *Local) Commit() string { return headCommit(l.dir) }

// Version implements View.
func (l *Local) Version() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.version
}

// Changed implements View.
func (l *Local) Changed(v uint64) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return changedSince(v, l.version, l.next)
}

// Done implements View: closed by Close.
func (l *Local) Done() <-chan struct{} { return l.stop }

// Hold implements View: a local directory is served as long as it is
// open, whatever follows it holds (its own files keep within
// LocalOptions.CacheBytes).
func (l *Local) Hold(int64) {}

// Watching reports how the view follows the directory: "events" or
// "polling" (for logs and status pages).
func (l *Local) Watching() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.polling {
		return "polling"
	}
	return "events"
}

// Searchable returns the searchable files, applying first the changes
// events reported that the background has not applied yet. The first call
// waits for the first walk (while ctx lasts).
func (l *Local) Searchable(ctx context.Context) ([]*File, error) {
	select {
	case <-l.ready:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for the first walk of the repository: %w", ctx.Err())
	}
	if l.initErr != nil {
		return nil, l.initErr
	}
	l.mu.Lock()
	if len(l.pending) > 0 || l.lost {
		// Not ctx: a change half applied would leave the view wrong.
		l.applyLocked(context.Background())
	}
	if l.list == nil {
		l.list = l.listLocked()
	}
	list, cold := l.list, l.cold
	l.mu.Unlock()
	if cold {
		return l.loadCold(ctx, list)
	}
	return list, nil
}

// run walks the directory, then follows it until Close.
func (l *Local) run() {
	started := time.Now()
	l.mu.Lock()
	if !l.polling {
		if why := unwatchable(l.dir); why != "" {
			l.polling = true
			l.log.Info("repository view: revalidating by stat", "dir", l.dir, "reason", why)
		}
	}
	if !l.polling {
		w, err := fsnotify.NewBufferedWatcher(4096)
		if err != nil {
			l.polling = true
			l.log.Warn("repository view: no file-system events; revalidating by stat", "dir", l.dir, "error", err)
		} else {
			l.watcher = w
		}
	}
	ctx := context.Background()
	l.initErr = l.scanLocked(ctx, ".", &ignoreRules{}, nil)
	l.dirty = false
	files, warm, cold := len(l.files), l.warm, l.cold
	l.mu.Unlock()
	close(l.ready)
	if l.initErr != nil {
		l.log.Error("repository view: first walk failed", "dir", l.dir, "error", l.initErr)
		return
	}
	l.log.Info("repository view ready", "dir", l.dir, "files", files, "warm_mb", warm>>20, "cold", cold,
		"mode", l.Watching(), "took_ms", time.Since(started).Milliseconds())
	l.mu.Lock()
	w := l.watcher
	l.mu.Unlock()
	if w != nil {
		l.wg.Go(func() { l.receive(w) })
	}
	l.follow()
}

// follow applies what events report, a moment after they stop coming, or
// revalidates by stat at the polling interval.
func (l *Local) follow() {
	poll := l.o.Poll
	for {
		var tick <-chan time.Time
		l.mu.Lock()
		if l.polling {
			tick = time.After(poll)
		}
		l.mu.Unlock()
		select {
		case <-l.stop:
			return
		case <-tick:
			started := time.Now()
			l.mu.Lock()
			l.lost = true
			l.applyLocked(context.Background())
			l.mu.Unlock()
			poll = max(l.o.Poll, 10*time.Since(started))
		case <-l.wake:
			select {
			case <-l.stop:
				return
			case <-time.After(settle):
			}
			l.mu.Lock()
			l.applyLocked(context.Background())
			l.mu.Unlock()
		}
	}
}

// receive queues the watcher's events until it closes.
func (l *Local) receive(w *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			rel, err := filepath.Rel(l.dir, ev.Name)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				continue
			}
			l.mu.Lock()
			l.pending[filepath.ToSlash(rel)] |= ev.Op
			l.mu.Unlock()
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			l.mu.Lock()
			l.lost = true
			l.mu.Unlock()
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				l.log.Warn("repository view: file-system events failed; revalidating by stat", "dir", l.dir, "error", err)
			}
		case <-l.stop:
			return
		}
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// applyLocked brings in what changed: everything (by stat) when events
// were lost or there are none, else the paths events named. It raises the
// version when something changed.
func (l *Local) applyLocked(ctx context.Context) {
	for p, op := range l.pending {
		if _, isDir := l.dirs[p]; isDir && op.Has(fsnotify.Rename) {
			// A folder moved: its watches (and those of the folders in
			// it) still carry the old names. Watch the tree anew.
			l.lost = true
		}
	}
	if l.lost {
		l.lost = false
		clear(l.pending)
		if err := l.rescanLocked(ctx, "."); err != nil {
			l.log.Warn("repository view: revalidation failed", "dir", l.dir, "error", err)
		}
	} else {
		paths := make([]string, 0, len(l.pending))
		for p := range l.pending {
			paths = append(paths, p)
		}
		slices.SortFunc(paths, WalkOrder) // folders before what they hold
		ops := l.pending
		l.pending = map[string]fsnotify.Op{}
		for _, p := range paths {
			if err := l.updateLocked(ctx, p, ops[p]); err != nil {
				l.log.Warn("repository view: update failed", "dir", l.dir, "path", p, "error", err)
			}
		}
	}
	l.publishLocked()
}

// publishLocked raises the version when something changed.
func (l *Local) publishLocked() {
	if !l.dirty {
		return
	}
	l.dirty = false
	l.list = nil
	l.version++
	close(l.next)
	l.next = make(chan struct{})
}

// updateLocked brings in one path an event named.
func (l *Local) updateLocked(ctx context.Context, p string, op fsnotify.Op) error {
	if p == "." {
		if op.Has(fsnotify.Remove) || op.Has(fsnotify.Rename) {
			l.lost = true // the root itself went away: revalidate
		}
		return nil
	}
	parent, name := path.Dir(p), path.Base(p)
	rules, visible := l.dirs[parent]
	if !visible {
		return nil // in a folder search does not enter
	}
	if slices.Contains(IgnoreFiles, name) {
		return l.rescanLocked(ctx, parent)
	}
	info, err := l.raw.Lstat(p)
	switch {
	case err != nil:
		l.removeLocked(p)
	case info.IsDir():
		_, known := l.dirs[p]
		switch {
		case hidden(p, name, true, rules, l.o.Policy):
			l.removeLocked(p)
		case !known:
			return l.scanLocked(ctx, p, rules, nil)
		case op.Has(fsnotify.Create) || op.Has(fsnotify.Rename):
			return l.rescanLocked(ctx, p) // replaced by another folder of the same name
		}
	case info.Mode().IsRegular() && !hidden(p, name, false, rules, l.o.Policy):
		l.removeDirLocked(p) // a folder replaced by a file
		return l.loadLocked(p, info)
	default:
		l.removeLocked(p)
	}
	return nil
}

// rescanLocked walks a folder again with its ignore rules read anew,
// reusing the contents of files whose size and modification time are
// unchanged.
func (l *Local) rescanLocked(ctx context.Context, dir string) error {
	inherited := &ignoreRules{}
	if dir != "." {
		var ok bool
		if inherited, ok = l.dirs[path.Dir(dir)]; !ok {
			l.removeLocked(dir)
			return nil
		}
	}
	old := map[string]*entry{}
	for p, e := range l.files {
		if under(p, dir) {
			old[p] = e
		}
	}
	oldDirs := map[string]bool{}
	for d := range l.dirs {
		if under(d, dir) {
			oldDirs[d] = true
		}
	}
	for p := range old {
		l.dropLocked(p)
	}
	// Unwatch first: a folder renamed inside the tree keeps its inotify
	// watch under the old name (and so do the folders in it), and adding
	// its new name would only find that stale watch.
	l.unwatchLocked(oldDirs)
	for d := range oldDirs {
		delete(l.dirs, d)
	}
	if info, err := l.raw.Lstat(dir); err != nil || !info.IsDir() {
		l.dirty = l.dirty || len(old) > 0
		return nil
	}
	err := l.scanLocked(ctx, dir, inherited, old)
	for p := range old {
		if _, kept := l.files[p]; !kept {
			l.dirty = true // removed, or now ignored
		}
	}
	return err
}

// under reports whether p is dir or lies inside it.
func under(p, dir string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

// scanLocked walks dir, watching every folder it enters, and adds the
// files it finds, in walk order. A file of old with the same size and
// modification time keeps its entry (and contents).
func (l *Local) scanLocked(ctx context.Context, dir string, inherited *ignoreRules, old map[string]*entry) error {
	var cands []candidate
	err := walk(ctx, l.raw, dir, inherited, l.o.Policy, func(d string, rules *ignoreRules) {
		l.dirs[d] = rules
		l.watchLocked(d)
	}, func(c candidate) { cands = append(cands, c) })
	if err != nil {
		return err
	}
	out := l.readLocked(cands, old)
	unreadable := 0
	for i, c := range cands {
		r := out[i]
		switch {
		case errors.Is(r.err, fs.ErrNotExist):
			continue // gone since the walk; its event follows
		case r.err != nil:
			unreadable++
			l.log.Debug("repository view: file not readable; left out", "path", c.path, "error", r.err)
		case r.keep != nil:
			l.files[c.path] = r.keep
			l.warm += r.keep.cost()
		default:
			l.addLocked(c.path, r.info, r.file)
		}
	}
	if unreadable > 0 {
		l.log.Warn("repository view: files left out because they cannot be read", "dir", l.dir, "folder", dir, "files", unreadable)
	}
	return nil
}

// scanned is what readLocked made of one file the walk found.
type scanned struct {
	info fs.FileInfo
	file *File  // nil: binary
	keep *entry // set: unchanged, keeps this entry
	err  error
}

// readLocked stats the files the walk found, then reads in parallel those
// that old does not hold unchanged. The first walk decides by the files'
// size whether contents are held compressed.
func (l *Local) readLocked(cands []candidate, old map[string]*entry) []scanned {
	out := make([]scanned, len(cands))
	parallel(len(cands), func(i int) {
		out[i].info, out[i].err = cands[i].d.Info()
	})
	if !l.walked {
		total := int64(0)
		for _, r := range out {
			if r.err == nil {
				total += r.info.Size()
			}
		}
		l.walked, l.compress = true, total > l.o.CompressAbove
	}
	parallel(len(cands), func(i int) {
		c, info := cands[i], out[i].info
		if out[i].err != nil {
			return
		}
		if e := old[c.path]; e != nil && e.size == info.Size() && e.mod.Equal(info.ModTime()) {
			out[i].keep = e
			return
		}
		data, err := fs.ReadFile(l.raw, c.path)
		out[i].file, out[i].err = newFile(c.path, data, info.ModTime(), l.compress), err
	})
	return out
}

// loadLocked reads one file and brings in its content when it changed.
func (l *Local) loadLocked(p string, info fs.FileInfo) error {
	data, err := fs.ReadFile(l.raw, p)
	if errors.Is(err, fs.ErrNotExist) {
		l.removeLocked(p)
		return nil
	}
	if err != nil {
		return err
	}
	f := newFile(p, data, info.ModTime(), l.compress)
	if e := l.files[p]; e != nil && e.mod.Equal(info.ModTime()) && e.same(f) {
		return nil
	}
	l.dropLocked(p)
	l.addLocked(p, info, f)
	return nil
}

// addLocked adds a file read just now (f: its File, nil when binary).
func (l *Local) addLocked(p string, info fs.FileInfo, f *File) {
	e := &entry{size: info.Size(), mod: info.ModTime()}
	if f != nil {
		if l.warm+f.memory() > l.o.CacheBytes {
			e.cold = true
		} else {
			e.file = f
		}
	}
	l.files[p] = e
	l.warm += e.cost()
	l.dirty = true
}

// same reports whether the entry holds exactly the content of f, a file
// read just now (nil: binary). A cold entry never does: it is read again.
func (e *entry) same(f *File) bool {
	if e.file == nil || f == nil {
		return e.file == nil && f == nil && !e.cold // both binary
	}
	return e.file.Hash() == f.Hash()
}

// cost is the memory an entry's contents take.
func (e *entry) cost() int64 {
	if e.file == nil {
		return 0
	}
	return e.file.memory()
}

// dropLocked forgets one file.
func (l *Local) dropLocked(p string) {
	if e := l.files[p]; e != nil {
		l.warm -= e.cost()
		delete(l.files, p)
		l.dirty = true
	}
}

// removeLocked forgets a file, or a folder and everything in it.
func (l *Local) removeLocked(p string) {
	l.dropLocked(p)
	l.removeDirLocked(p)
}

// removeDirLocked forgets a folder and everything in it, if it was one.
func (l *Local) removeDirLocked(p string) {
	if _, ok := l.dirs[p]; !ok {
		return
	}
	gone := map[string]bool{}
	for d := range l.dirs {
		if under(d, p) {
			gone[d] = true
			delete(l.dirs, d)
		}
	}
	for f := range l.files {
		if under(f, p) {
			l.dropLocked(f)
		}
	}
	l.unwatchLocked(gone)
}

// watchLocked watches a folder search enters. When the watch cannot be
// added (the kernel's limit on watches, say) the view falls back to stat
// revalidation.
func (l *Local) watchLocked(dir string) {
	if l.watcher == nil {
		return
	}
	if err := l.watcher.Add(filepath.Join(l.dir, filepath.FromSlash(dir))); err != nil {
		l.log.Warn("repository view: cannot watch every folder; revalidating by stat instead (raise fs.inotify.max_user_watches, or set "+config.RepoWatch.Name()+"=poll)",
			"dir", l.dir, "folder", dir, "watched", len(l.dirs), "error", err)
		l.watcher.Close()
		l.watcher = nil
		l.polling = true
	}
}

// unwatchLocked stops watching folders search no longer enters.
func (l *Local) unwatchLocked(dirs map[string]bool) {
	if l.watcher == nil {
		return
	}
	for d := range dirs {
		l.watcher.Remove(filepath.Join(l.dir, filepath.FromSlash(d))) // gone already when the folder was deleted
	}
}

// listLocked returns the searchable files in walk order.
func (l *Local) listLocked() []*File {
	paths := make([]string, 0, len(l.files))
	l.cold = false
	for p, e := range l.files {
		if e.file != nil || e.cold {
			paths = append(paths, p)
		}
		l.cold = l.cold || e.cold
	}
	slices.SortFunc(paths, WalkOrder)
	list := make([]*File, len(paths))
	for i, p := range paths {
		if f := l.files[p].file; f != nil {
			list[i] = f
		} else {
			list[i] = &File{Path: p} // cold: read by loadCold
		}
	}
	return list
}

// loadCold returns list with the files not held in memory read from disk
// (those that vanished or turned binary are left out).
func (l *Local) loadCold(ctx context.Context, list []*File) ([]*File, error) {
	out := slices.Clone(list)
	parallel(len(out), func(i int) {
		f := out[i]
		if f.plain != nil || f.packed != nil || ctx.Err() != nil {
			return
		}
		info, err := l.raw.Lstat(f.Path)
		if err != nil || !info.Mode().IsRegular() {
			out[i] = nil
			return
		}
		data, err := fs.ReadFile(l.raw, f.Path)
		if err != nil {
			out[i] = nil
			return
		}
		out[i] = newFile(f.Path, data, info.ModTime(), l.compress)
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, func(f *File) bool { return f == nil }), nil
}

// WalkOrder orders slash paths as a walk visits them, the order of
// View.Searchable: folder by folder, names sorted, a folder's contents
// right after it.
func WalkOrder(a, b string) int {
	for {
		ai, bi := strings.IndexByte(a, '/'), strings.IndexByte(b, '/')
		as, bs := a, b
		if ai >= 0 {
			as = a[:ai]
		}
		if bi >= 0 {
			bs = b[:bi]
		}
		if c := strings.Compare(as, bs); c != 0 || ai < 0 || bi < 0 {
			if c != 0 {
				return c
			}
			return cmpInt(ai, bi) // the folder itself before what it holds
		}
		a, b = a[ai+1:], b[bi+1:]
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// parallel runs fn for 0..n-1 on a worker per core.
func parallel(n int, fn func(i int)) {
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(n, 1)) {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}

// headCommit returns the commit HEAD names in the git checkout at dir, or
// "" when dir is not one (or HEAD cannot be read). It reads .git directly
// (regular files only: a named pipe there would hold every call):
// a .git file (worktrees) points at the real git directory, whose
// "commondir" holds shared refs; refs may be loose or packed.
func headCommit(dir string) string {
	gitDir := filepath.Join(dir, ".git")
	if data, err := readRegular(gitDir); err == nil {
		target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
		if !ok {
			return ""
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		gitDir = target
	}
	head, err := readRegular(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	ref, isRef := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: ")
	if !isRef {
		return ref
	}
	dirs := []string{gitDir}
	if common, err := readRegular(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		dirs = append(dirs, c)
	}
	for _, d := range dirs {
		if data, err := readRegular(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			return strings.TrimSpace(string(data))
		}
		packed, err := readRegular(filepath.Join(d, "packed-refs"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(packed), "\n") {
			if id, name, ok := strings.Cut(strings.TrimSpace(line), " "); ok && name == ref {
				return id
			}
		}
	}
	return ""
}

// osFS is the part of an os.Root's file system the view reads through.
type osFS interface {
	fs.StatFS
	fs.ReadLinkFS
}

// osRootFS is an os.Root's FS (fs.StatFS and fs.ReadLinkFS since Go 1.25)
// opening only folders and regular files (rootFS).
func osRootFS(root *os.Root) osFS { return rootFS{osFS: root.FS().(osFS), root: root} }

// localFS is what the tools read of a directory: raw (its os.Root) through
// policy; dirFile, the same directory open, lets the kernel say when a
// name passes no symbolic link.
func localFS(raw osFS, dirFile *os.File, policy *Policy) policedFS {
	return policedFS{fsys: raw, policy: policy, noLinks: func(name string) bool { return noLinks(dirFile, name) }}
}
