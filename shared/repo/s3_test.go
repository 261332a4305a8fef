package repo_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// countingGetter counts the GETs that reach S3, by key.
type countingGetter struct {
	objects.API
	mu   sync.Mutex
	gets map[string]int
}

func (c *countingGetter) GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	c.mu.Lock()
	c.gets[aws.ToString(in.Key)]++
	c.mu.Unlock()
	return c.API.GetObject(ctx, in, opts...)
}

// take returns the counts since the last call and resets them.
func (c *countingGetter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gets
	c.gets = map[string]int{}
	return g
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func testS3(t *testing.T, s *repotest.S3) {
	ctx := context.Background()
	v1 := repotest.WriteDir(t, map[string]string{"a.txt": "version 1\n"})
	v2 := repotest.WriteDir(t, map[string]string{"a.txt": "version 2\n", "b.txt": "new\n"})
	s.Publish(t, "s3-acme", "c1", v1)

	counter := &countingGetter{API: s.Moto.S3(), gets: map[string]int{}}
	counted := objects.New(counter, s.Bucket)
	clk := &clock{now: time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC)}
	src := repo.NewS3(counted, repo.S3Options{Refresh: 5 * time.Second, Now: clk.Now})

	open := func(tenant, wantCommit, wantA string) repo.View {
		t.Helper()
		snap, err := src.Open(ctx, reposcope.DefaultOf(tenant))
		if err != nil {
			t.Fatalf("open %s: %v", tenant, err)
		}
		got, _ := fs.ReadFile(snap, "a.txt")
		if snap.Commit() != wantCommit || string(got) != wantA {
			t.Fatalf("open %s: commit %s with a.txt %q, want %s with %q", tenant, snap.Commit(), got, wantCommit, wantA)
		}
		return snap
	}
	gets := func(want map[string]int) {
		t.Helper()
		if got := counter.take(); !equalCounts(got, want) {
			t.Errorf("GETs %v, want %v", got, want)
		}
	}
	pointer, zip1, zip2 := repo.PointerKey(reposcope.DefaultOf("s3-acme")), repo.ZipKey(reposcope.DefaultOf("s3-acme"), "c1"), repo.ZipKey(reposcope.DefaultOf("s3-acme"), "c2")

	first := open("s3-acme", "c1", "version 1\n")
	gets(map[string]int{pointer: 1, zip1: 1})
	if again := open("s3-acme", "c1", "version 1\n"); again != first {
		t.Error("a second open within the refresh interval made a new snapshot")
	}
	gets(map[string]int{})

	clk.add(5 * time.Second)
	if again := open("s3-acme", "c1", "version 1\n"); again != first {
		t.Error("an unchanged pointer made a new snapshot")
	}
	gets(map[string]int{pointer: 1}) // answered 304 Not Modified

	s.Publish(t, "s3-acme", "c2", v2)
	open("s3-acme", "c1", "version 1\n") // still trusted
	gets(map[string]int{})
	clk.add(5 * time.Second)
	second := open("s3-acme", "c2", "version 2\n")
	gets(map[string]int{pointer: 1, zip2: 1})
	// The replaced snapshot is done: what follows it lets it go.
	if !done(first) || done(second) {
		t.Errorf("after a push, the replaced view done: %v, the new one: %v", done(first), done(second))
	}

	// Rollback is seen the same way, and downloads the old zip again.
	if _, err := repo.Rollback(ctx, s.Objects(), reposcope.DefaultOf("s3-acme"), "", clk.Now()); err != nil {
		t.Fatal(err)
	}
	clk.add(5 * time.Second)
	open("s3-acme", "c1", "version 1\n")
	gets(map[string]int{pointer: 1, zip1: 1})

	// Tenants without a snapshot.
	if _, err := src.Open(ctx, reposcope.DefaultOf("nobody")); !errors.Is(err, repo.ErrNoRepository) {
		t.Errorf("tenant without snapshot: %v, want ErrNoRepository", err)
	}
	withDefault := repo.NewS3(s.Objects(), repo.S3Options{DefaultRepo: "s3-acme"})
	if snap, err := withDefault.Open(ctx, reposcope.DefaultOf("nobody")); err != nil || snap.Commit() != "c1" {
		t.Errorf("fallback to the default repository: %v, %v", snap, err)
	}
	// A tenant's own snapshot wins over the default.
	s.Publish(t, "s3-own", "own1", v2)
	if snap, err := withDefault.Open(ctx, reposcope.DefaultOf("s3-own")); err != nil || snap.Commit() != "own1" {
		t.Errorf("own snapshot: %v, %v", snap, err)
	}

	// A pointer naming another tenant's zip is refused.
	_, err := s.Moto.S3().PutObject(ctx, &s3.PutObjectInput{
		Bucket: &s.Bucket, Key: aws.String(repo.PointerKey(reposcope.DefaultOf("s3-evil"))),
		Body: strings.NewReader(`{"commit":"c1","key":"` + zip1 + `"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if snap, err := src.Open(ctx, reposcope.DefaultOf("s3-evil")); err == nil {
		t.Errorf("a pointer to another tenant's zip opened %v", snap.Commit())
	}

	// A snapshot over MaxBytes is refused, saying so (SIZE_LIMIT_EXCEEDED
	// naming the setting, not an internal error).
	small := repo.NewS3(s.Objects(), repo.S3Options{MaxBytes: 10})
	if _, err := small.Open(ctx, reposcope.DefaultOf("s3-acme")); toolerr.From(err).Code != toolerr.SizeLimitExceeded || !strings.Contains(err.Error(), config.RepoMaxMB.Name()) {
		t.Errorf("oversized snapshot: %v (%s)", err, toolerr.From(err).Code)
	}

	// A caller that gives up does not stop the download: the next call
	// gets the snapshot without a second one.
	counter.take()
	patient := repo.NewS3(counted, repo.S3Options{Now: clk.Now})
	gone, cancel := context.WithCancel(ctx)
	cancel()
	patient.Open(gone, reposcope.DefaultOf("s3-acme")) // may fail or not, depending on timing
	if snap, err := patient.Open(ctx, reposcope.DefaultOf("s3-acme")); err != nil || snap.Commit() != "c1" {
		t.Fatalf("after a cancelled call: %v, %v", snap, err)
	}
	gets(map[string]int{pointer: 1, zip1: 1})
	snap, _ := patient.Open(ctx, reposcope.DefaultOf("s3-acme"))
	patient.Open(gone, reposcope.DefaultOf("s3-acme"))
	snap.Searchable(gone) // starts the build, which outlives the call
	if files, err := snap.Searchable(ctx); err != nil || len(files) != 1 {
		t.Errorf("searchable after a cancelled call: %v, %v", files, err)
	}

	// Beyond CacheBytes the least recently used snapshot is dropped, and
	// done.
	evicting := repo.NewS3(counted, repo.S3Options{CacheBytes: 1, Now: clk.Now})
	counter.take()
	var views []repo.View
	for _, tenant := range []string{"s3-acme", "s3-own", "s3-acme"} {
		v, err := evicting.Open(ctx, reposcope.DefaultOf(tenant))
		if err != nil {
			t.Fatal(err)
		}
		views = append(views, v)
	}
	gets(map[string]int{pointer: 2, zip1: 2, repo.PointerKey(reposcope.DefaultOf("s3-own")): 1, repo.ZipKey(reposcope.DefaultOf("s3-own"), "own1"): 1})
	if !done(views[0]) || !done(views[1]) || done(views[2]) {
		t.Errorf("dropped views done: %v %v, the one in use: %v", done(views[0]), done(views[1]), done(views[2]))
	}
}

// testS3Holds: what follows a snapshot (View.Hold) counts with it: held
// bytes beyond CacheBytes drop the least recently used other snapshot, and
// bytes let go count no more. It runs after testS3 (its repositories).
func testS3Holds(t *testing.T, s *repotest.S3) {
	ctx := context.Background()
	holding := repo.NewS3(s.Objects(), repo.S3Options{CacheBytes: 1 << 20})
	acme, err1 := holding.Open(ctx, reposcope.DefaultOf("s3-acme"))
	own, err2 := holding.Open(ctx, reposcope.DefaultOf("s3-own"))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	acme.Hold(1 << 19)
	if done(acme) || done(own) {
		t.Fatal("two snapshots and half the budget held: one was dropped")
	}
	acme.Hold(1 << 19)
	if done(acme) || !done(own) {
		t.Errorf("the budget held for acme: acme dropped %v, own dropped %v", done(acme), done(own))
	}
	acme.Hold(-1 << 20)
	if own, _ = holding.Open(ctx, reposcope.DefaultOf("s3-own")); done(acme) || done(own) {
		t.Errorf("once acme's followers let go, a snapshot was dropped: acme %v, own %v", done(acme), done(own))
	}
}

// holdingGetter holds the GETs of key, once hold is set, until release is
// closed (held is closed when the first one is).
type holdingGetter struct {
	objects.API
	key     string
	hold    atomic.Bool
	held    chan struct{}
	once    sync.Once
	release chan struct{}
}

func (h *holdingGetter) GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if h.hold.Load() && aws.ToString(in.Key) == h.key {
		h.once.Do(func() { close(h.held) })
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.API.GetObject(ctx, in, opts...)
}

// testS3CountsWhatItRevalidates: a repository whose pointer is being
// revalidated (a download may follow) keeps its snapshot, which counts
// with what its followers hold: another snapshot's followers holding more
// drop a third, idle one, to keep within CacheBytes.
func testS3CountsWhatItRevalidates(t *testing.T, s *repotest.S3) {
	ctx := context.Background()
	tenants := []string{"budget-a", "budget-b", "budget-c"}
	for _, tenant := range tenants {
		s.Publish(t, tenant, "c1", repotest.WriteDir(t, map[string]string{"a.txt": tenant + "\n"}))
	}
	first := reposcope.DefaultOf(tenants[0])
	getter := &holdingGetter{API: s.Moto.S3(), key: repo.PointerKey(first), held: make(chan struct{}), release: make(chan struct{})}
	clk := &clock{now: time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC)}
	src := repo.NewS3(objects.New(getter, s.Bucket), repo.S3Options{CacheBytes: 1 << 20, Refresh: 5 * time.Second, Now: clk.Now})
	var views []repo.View
	for _, tenant := range tenants {
		v, err := src.Open(ctx, reposcope.DefaultOf(tenant))
		if err != nil {
			t.Fatal(err)
		}
		views = append(views, v)
	}
	a, b, c := views[0], views[1], views[2]
	a.Hold(600 << 10) // a's symbol table, say

	clk.add(5 * time.Second)
	getter.hold.Store(true)
	t.Cleanup(func() { close(getter.release) })
	if v, err := src.Open(ctx, first); err != nil || v != a { // served while its pointer is read
		t.Fatalf("open a while it is revalidated: %v, %v", v, err)
	}
	<-getter.held
	b.Hold(600 << 10)
	if done(a) || done(b) || !done(c) {
		t.Errorf("over the budget while a is revalidated: dropped a %v, b %v, c %v; want c alone", done(a), done(b), done(c))
	}
}

// done reports whether the view is done.
func done(v repo.View) bool {
	select {
	case <-v.Done():
		return true
	default:
		return false
	}
}

func testPublish(t *testing.T, s *repotest.S3) {
	ctx := context.Background()
	client := s.Objects()
	dir := repotest.WriteDir(t, map[string]string{"a.txt": "hello\n", "sub/b.txt": "world\n"})
	outside := repotest.WriteDir(t, map[string]string{"secret": "do not pack\n"})
	mustSymlink(t, filepath.Join(outside, "secret"), filepath.Join(dir, "link"))
	mustSymlink(t, outside, filepath.Join(dir, "linkdir"))

	in := repo.PublishInput{
		Repo: reposcope.DefaultOf("pub"), Commit: "p1", Dir: dir,
		Paths:    []string{"a.txt", "sub/b.txt", "link", "linkdir/secret", "gone.txt", "../x"},
		MaxBytes: 100, Now: repotest.ModTime,
	}
	out, err := repo.Publish(ctx, client, in)
	if err != nil {
		t.Fatal(err)
	}
	want := repo.Pointer{Commit: "p1", Key: "snapshots/pub/p1.zip", Files: 2, Bytes: 12, ZipBytes: out.Pointer.ZipBytes,
		Created: repotest.ModTime, Seq: repotest.ModTime.UnixMilli()}
	if !reflect.DeepEqual(out.Pointer, want) || strings.Join(out.Skipped, ",") != "link,linkdir/secret,gone.txt,../x" {
		t.Errorf("published %+v skipped %q, want %+v", out.Pointer, out.Skipped, want)
	}
	if got, ok, err := repo.ReadPointer(ctx, client, reposcope.DefaultOf("pub")); err != nil || !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("pointer %+v %v %v", got, ok, err)
	}
	zipped := getObject(t, s, want.Key)
	if int64(len(zipped)) != want.ZipBytes || bytes.Contains(zipped, []byte("do not pack")) {
		t.Errorf("zip of %d bytes (pointer says %d)", len(zipped), want.ZipBytes)
	}

	// Too large: nothing is uploaded and the pointer does not move.
	big := in
	big.Commit, big.MaxBytes = "p2", 11
	if _, err := repo.Publish(ctx, client, big); !errors.Is(err, repo.ErrTooLarge) {
		t.Errorf("over the size limit: %v, want ErrTooLarge", err)
	}
	if got, _, _ := repo.ReadPointer(ctx, client, reposcope.DefaultOf("pub")); got.Commit != "p1" {
		t.Errorf("pointer moved to %s", got.Commit)
	}

	// A second push (within the same second: S3's LastModified cannot
	// tell them apart) retires the first; list shows both, newest first.
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in.Commit, in.Now = "p3", repotest.ModTime.Add(time.Minute)
	if out, err := repo.Publish(ctx, client, in); err != nil || out.Previous != "snapshots/pub/p1.zip" || out.RetireErr != nil {
		t.Fatalf("second push: %+v, %v", out, err)
	}
	list, err := repo.List(ctx, client, reposcope.DefaultOf("pub"))
	if err != nil || len(list) != 2 || list[0].Commit != "p3" || !list[0].Current || list[1].Commit != "p1" || list[1].Current {
		t.Fatalf("list %+v, %v", list, err)
	}
	if got := tagOf(t, s, "snapshots/pub/p1.zip"); got != repo.Retired {
		t.Errorf("p1 tagged %q after p3 was pushed, want retired", got)
	}

	// Rollback without a commit goes to the previous one.
	p, err := repo.Rollback(ctx, client, reposcope.DefaultOf("pub"), "", repotest.ModTime)
	if err != nil || p.Commit != "p1" || p.Files != 2 || p.Bytes != 12 || p.ZipBytes != want.ZipBytes {
		t.Fatalf("rollback: %+v, %v", p, err)
	}
	if tagOf(t, s, "snapshots/pub/p1.zip") != repo.Current || tagOf(t, s, "snapshots/pub/p3.zip") != repo.Retired {
		t.Error("rollback did not swap the tags")
	}
	if _, err := repo.Rollback(ctx, client, reposcope.DefaultOf("pub"), "", repotest.ModTime); !errors.Is(err, repo.ErrNoSnapshot) {
		t.Errorf("rollback past the oldest: %v", err)
	}
	if _, err := repo.Rollback(ctx, client, reposcope.DefaultOf("pub"), "nope", repotest.ModTime); !errors.Is(err, repo.ErrNoSnapshot) {
		t.Errorf("rollback to a missing commit: %v", err)
	}
	for _, bad := range []string{"../other", "a/b", "", ".hidden", "x y"} {
		for _, r := range []reposcope.Ref{reposcope.DefaultOf(bad), {Tenant: "pub", Name: bad}} {
			bin := in
			bin.Repo = r
			if _, err := repo.Publish(ctx, client, bin); err == nil {
				t.Errorf("repository %+v was accepted", r)
			}
		}
	}
}

func getObject(t *testing.T, s *repotest.S3, key string) []byte {
	t.Helper()
	out, err := s.Moto.S3().GetObject(context.Background(), &s3.GetObjectInput{Bucket: &s.Bucket, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(out.Body)
	return b.Bytes()
}

func tagOf(t *testing.T, s *repotest.S3, key string) string {
	t.Helper()
	out, err := s.Moto.S3().GetObjectTagging(context.Background(), &s3.GetObjectTaggingInput{Bucket: &s.Bucket, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range out.TagSet {
		if aws.ToString(tg.Key) == repo.StateTag {
			return aws.ToString(tg.Value)
		}
	}
	return ""
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
