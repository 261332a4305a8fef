package githistory_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// watched is the bucket's API with its GETs recorded (key and range)
// and, when cut is set, the body of a pack's GET cut after cutAfter bytes:
// cut is called then, and the read fails once the request ends.
type watched struct {
	objects.API
	mu       sync.Mutex
	gets     []string
	cut      func()
	cutAfter int
}

func (w *watched) GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	w.mu.Lock()
	w.gets = append(w.gets, aws.ToString(in.Key)+" "+aws.ToString(in.Range))
	cut := w.cut
	w.cut = nil
	w.mu.Unlock()
	out, err := w.API.GetObject(ctx, in, opts...)
	if err == nil && cut != nil && strings.HasSuffix(aws.ToString(in.Key), ".pack") {
		out.Body = &cutBody{ReadCloser: out.Body, ctx: ctx, left: w.cutAfter, cut: cut}
	} else if cut != nil {
		w.cut = cut
	}
	return out, err
}

// take returns the GETs since the last call.
func (w *watched) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	g := w.gets
	w.gets = nil
	return g
}

type cutBody struct {
	io.ReadCloser
	ctx  context.Context
	left int
	cut  func()
}

func (c *cutBody) Read(p []byte) (int, error) {
	if c.left == 0 {
		c.cut()
		<-c.ctx.Done()
		return 0, c.ctx.Err()
	}
	n, err := c.ReadCloser.Read(p[:min(len(p), c.left)])
	c.left -= n
	return n, err
}

// pushed is a fixture repository whose history is pushed to a bucket.
type pushed struct {
	t      *testing.T
	s3     *repotest.S3
	api    *watched
	bucket *objects.Bucket
	dir    string
	ref    reposcope.Ref
	src    *repo.S3
}

func newPushed(t *testing.T, s *repotest.S3, name string) *pushed {
	api := &watched{API: s.Moto.S3()}
	return &pushed{t: t, s3: s, api: api, bucket: objects.New(api, s.Bucket), dir: repotest.GitHistory(t),
		ref: reposcope.Ref{Tenant: "acme", Name: name}, src: s.Source(repo.S3Options{Refresh: time.Nanosecond})}
}

// push pushes the history of HEAD within bound.
func (p *pushed) push(bound githistory.Bound) githistory.Pushed {
	p.t.Helper()
	out, err := githistory.Push(context.Background(), p.s3.Objects(), githistory.PushInput{Repo: p.ref, Dir: p.dir, Commit: p.head(), Bound: bound, Now: time.Now()})
	if err != nil {
		p.t.Fatal(err)
	}
	return out
}

func (p *pushed) head() string {
	p.t.Helper()
	r, err := githistory.Open(context.Background(), p.dir)
	if err != nil {
		p.t.Fatal(err)
	}
	return mustResolve(p.t, r, "HEAD")
}

// view publishes the snapshot of HEAD (made from git commit) and returns
// the S3 source's view of it.
func (p *pushed) view(commit string) repo.View {
	p.t.Helper()
	ctx := context.Background()
	_, err := repo.Publish(ctx, p.s3.Objects(), repo.PublishInput{Repo: p.ref, Commit: commit, Git: commit, Dir: p.dir,
		Paths: []string{"README.md"}, MaxBytes: repo.DefaultMaxBytes, Now: time.Now()})
	if err != nil {
		p.t.Fatal(err)
	}
	v, err := p.src.Open(ctx, p.ref)
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

func (p *pushed) published() *githistory.Published {
	return &githistory.Published{Bucket: func(context.Context) (*objects.Bucket, error) { return p.bucket, nil }, Dir: p.t.TempDir()}
}

func errCode(err error) toolerr.Code {
	var te *toolerr.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return ""
}

// TestPublished runs on one moto_server.
func TestPublished(t *testing.T) {
	s := repotest.StartS3(t)
	t.Run("the same history as the checkout", func(t *testing.T) { testSameAsLocal(t, s) })
	t.Run("a second push uploads one pack", func(t *testing.T) { testIncremental(t, s) })
	t.Run("a bounded push blames boundary", func(t *testing.T) { testBounded(t, s) })
	t.Run("a cut copy resumes", func(t *testing.T) { testResume(t, s) })
	t.Run("a commit not pushed", func(t *testing.T) { testMissingCommit(t, s) })
	t.Run("a corrupt history", func(t *testing.T) { testCorrupt(t, s) })
	t.Run("diffs as in the checkout", func(t *testing.T) { testAttributes(t, s) })
}

// testAttributes: a checkout's .gitattributes decide how its diffs look
// (the function a hunk is in, diff=perl; -diff makes a file binary), and
// the copy's diffs look the same, nested .gitattributes files included.
func testAttributes(t *testing.T, s *repotest.S3) {
	p := newPushed(t, s, "attributes")
	sub := func(body string) string { return "package X;\n\nsub greet {\n" + body + "}\n\n1;\n" }
	lines := "  my $a = 1;\n  my $b = 2;\n  my $e = 5;\n  my $f = 6;\n  my $c = 3;\n  my $d = 4;\n"
	repotest.GitCommit(t, p.dir, "Add attributes", map[string]string{
		".gitattributes":       "*.pm diff=perl\n",
		"lib/.gitattributes":   "*.dat -diff\n",
		"lib/deep/Greet.pm":    sub(lines),
		"lib/deep/table.dat":   "one\n",
		"tools/deep/other.dat": "one\n",
	})
	repotest.GitCommit(t, p.dir, "Change them", map[string]string{
		"lib/deep/Greet.pm":    sub(strings.Replace(lines, "$c = 3", "$c = 30", 1)),
		"lib/deep/table.dat":   "two\n",
		"tools/deep/other.dat": "two\n",
	})
	p.push(githistory.Bound{})
	ctx := context.Background()
	got, err := p.published().Open(ctx, p.view(p.head()))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := githistory.Open(ctx, p.dir)
	var changes [2][]githistory.Change
	var patches [2][]githistory.Patch
	for i, r := range []*githistory.Repo{got, want} {
		var err error
		changes[i], err = r.Changes(ctx, "HEAD~1", "HEAD")
		if err == nil {
			patches[i], err = r.Patches(ctx, "HEAD~1", "HEAD", changes[i])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(changes[0], changes[1]) || !reflect.DeepEqual(patches[0], patches[1]) {
		t.Errorf("the copy's diff:\n%+v\n%+v\nthe checkout's:\n%+v\n%+v", changes[0], patches[0], changes[1], patches[1])
	}
	var header string
	var binary, text bool
	for i, c := range changes[1] {
		switch {
		case c.Path == "lib/deep/Greet.pm" && len(patches[1][i].Hunks) == 1:
			header = patches[1][i].Hunks[0].Header
		case c.Path == "lib/deep/table.dat":
			binary = c.Binary
		case c.Path == "tools/deep/other.dat":
			text = !c.Binary
		}
	}
	if header != "sub greet {" || !binary || !text {
		t.Errorf("the checkout's diff: header %q, lib's .dat binary %v, tools' .dat text %v", header, binary, text)
	}
}

func testSameAsLocal(t *testing.T, s *repotest.S3) {
	p := newPushed(t, s, "same")
	p.push(githistory.Bound{})
	ctx := context.Background()
	got, err := p.published().Open(ctx, p.view(p.head()))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := githistory.Open(ctx, p.dir)
	head := p.head()
	for _, r := range []*githistory.Repo{got, want} {
		if h, _, err := r.Head(ctx); err != nil || h != head {
			t.Errorf("HEAD %s %v, want %s", h, err, head)
		}
	}
	gotLog, err1 := got.Log(ctx, githistory.LogQuery{From: head, Path: "src/app.go", Follow: true})
	wantLog, err2 := want.Log(ctx, githistory.LogQuery{From: head, Path: "src/app.go", Follow: true})
	if err1 != nil || err2 != nil || !reflect.DeepEqual(gotLog, wantLog) {
		t.Errorf("log: %v %v\n%+v\nwant %+v", err1, err2, gotLog, wantLog)
	}
	gotBlame, err1 := got.Blame(ctx, githistory.BlameQuery{Rev: head, Path: "src/app.go"})
	wantBlame, err2 := want.Blame(ctx, githistory.BlameQuery{Rev: head, Path: "src/app.go"})
	if err1 != nil || err2 != nil || !reflect.DeepEqual(gotBlame, wantBlame) || slices.ContainsFunc(gotBlame.Hunks, func(h githistory.BlameHunk) bool { return h.Boundary }) {
		t.Errorf("blame: %v %v\n%+v\nwant %+v", err1, err2, gotBlame, wantBlame)
	}
	gotRefs, err1 := got.Refs(ctx)
	wantRefs, err2 := want.Refs(ctx)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(gotRefs, wantRefs) || len(gotRefs) != 3 {
		t.Errorf("refs: %v %v\n%+v\nwant %+v", err1, err2, gotRefs, wantRefs)
	}
}

func testIncremental(t *testing.T, s *repotest.S3) {
	p := newPushed(t, s, "incremental")
	first := p.push(githistory.Bound{})
	ctx := context.Background()
	pub := p.published()
	before, err := pub.Open(ctx, p.view(p.head()))
	if err != nil {
		t.Fatal(err)
	}
	repotest.GitCommit(t, p.dir, "Grow the app again", map[string]string{"src/app.go": "grown again\n"})
	second := p.push(githistory.Bound{})
	if first.Pack.Commits != 6 || second.Pack == nil || second.Pack.Commits != 1 || len(second.Manifest.Packs) != 2 ||
		second.Manifest.Packs[0] != *first.Pack || second.Manifest.Commits != 7 || !slices.Equal(second.Manifest.Tips, []string{p.head()}) {
		t.Fatalf("second push: %+v after %+v", second, first)
	}
	if again := p.push(githistory.Bound{}); again.Pack != nil || len(again.Manifest.Packs) != 2 {
		t.Errorf("a push of the same commit: %+v", again)
	}
	v := p.view(p.head())
	p.api.take()
	r, err := pub.Open(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	var packs []string
	for _, g := range p.api.take() {
		if strings.Contains(g, "/pack-") {
			packs = append(packs, g)
		}
	}
	if len(packs) != 2 || !strings.Contains(packs[0], second.Pack.Name) || !strings.Contains(packs[1], second.Pack.Name) {
		t.Errorf("the newer manifest fetched %q, want only %s's pack and index", packs, second.Pack.Name)
	}
	if cs, err := r.Log(ctx, githistory.LogQuery{From: p.head()}); err != nil || len(cs) != 7 {
		t.Errorf("log after the second push: %d commits, %v", len(cs), err)
	}
	if r != before {
		t.Error("the copy moved to the newer pointer is another Repo: the first one's git cat-file would be left running")
	}
}

func testBounded(t *testing.T, s *repotest.S3) {
	p := newPushed(t, s, "bounded")
	out := p.push(githistory.Bound{Depth: 2})
	if out.Shallow == 0 || len(out.Manifest.Shallow) != out.Shallow {
		t.Fatalf("a push of depth 2: %+v", out)
	}
	ctx := context.Background()
	r, err := p.published().Open(ctx, p.view(p.head()))
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := r.Log(ctx, githistory.LogQuery{From: p.head()}); err != nil || len(cs) != 2 {
		t.Errorf("log of a history of depth 2: %d commits, %v", len(cs), err)
	}
	b, err := r.Blame(ctx, githistory.BlameQuery{Rev: p.head(), Path: "README.md"})
	if err != nil || len(b.Hunks) == 0 || !b.Hunks[0].Boundary || b.Hunks[0].Commit != out.Manifest.Shallow[0] {
		t.Errorf("blame at the boundary: %+v %v (shallow %q)", b, err, out.Manifest.Shallow)
	}
	if refs, err := r.Refs(ctx); err != nil || len(refs) != 2 || refs[0].Name != "main" || refs[1].Name != "v1.0" {
		t.Errorf("refs of the bounded history (feature's commit is not uploaded): %+v %v", refs, err)
	}
}

func testResume(t *testing.T, s *repotest.S3) {
	p := newPushed(t, s, "resume")
	pack := p.push(githistory.Bound{}).Pack
	pub := p.published()
	v := p.view(p.head())
	ctx, cancel := context.WithCancel(context.Background())
	p.api.cutAfter, p.api.cut = 100, cancel
	_, err := pub.Open(ctx, v)
	if errCode(err) != toolerr.Timeout || !strings.Contains(err.Error(), "still being copied") {
		t.Fatalf("a copy cut short: %v", err)
	}
	p.api.take()
	if _, err := pub.Open(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	want := []string{githistory.PackKey(p.ref, pack.Name, ".pack") + " bytes=100-"}
	var got []string
	for _, g := range p.api.take() {
		if strings.Contains(g, "/pack-") {
			got = append(got, g)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the second copy fetched %q, want %q", got, want)
	}
}

func testMissingCommit(t *testing.T, s *repotest.S3) {
	p := newPushed(t, s, "missing")
	p.push(githistory.Bound{})
	repotest.GitCommit(t, p.dir, "Not pushed", map[string]string{"new.txt": "new\n"})
	_, err := p.published().Open(context.Background(), p.view(p.head()))
	if errCode(err) != toolerr.ResourceNotFound || !strings.Contains(err.Error(), "scripts/snapshot push") {
		t.Errorf("a snapshot whose commit is not in the history: %v", err)
	}
	q := newPushed(t, s, "never")
	if _, err := q.published().Open(context.Background(), q.view(q.head())); errCode(err) != toolerr.ResourceNotFound {
		t.Errorf("a snapshot pushed without its history: %v", err)
	}
}

func testCorrupt(t *testing.T, s *repotest.S3) {
	ctx := context.Background()
	p := newPushed(t, s, "corrupt")
	pack := p.push(githistory.Bound{}).Pack
	key := githistory.PackKey(p.ref, pack.Name, ".pack")
	data, _, err := p.s3.Objects().Read(ctx, key, "", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if _, err := p.s3.Objects().Put(ctx, key, data, objects.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	pub := p.published()
	_, err = pub.Open(ctx, p.view(p.head()))
	if errCode(err) != toolerr.UpstreamError || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("a corrupt pack: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(pub.Dir, "acme+corrupt", "objects", "pack")); len(entries) != 0 {
		t.Errorf("a corrupt pack was kept: %v", entries)
	}

	q := newPushed(t, s, "corrupt-manifest")
	q.push(githistory.Bound{})
	if _, err := q.s3.Objects().Put(ctx, githistory.ManifestKey(q.ref), []byte(`{"version":1,"packs":[{"name":"../../x"}]}`), objects.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.published().Open(ctx, q.view(q.head())); errCode(err) != toolerr.UpstreamError {
		t.Errorf("a corrupt manifest: %v", err)
	}
}

func FuzzDecodeManifest(f *testing.F) {
	id := strings.Repeat("a", 40)
	for _, s := range []string{
		`{"version":1,"packs":[{"name":"pack-` + id + `","bytes":100,"idxBytes":100,"tip":"` + id + `"}],"tips":["` + id + `"],"refs":[{"name":"refs/heads/main","object":"` + id + `","commit":"` + id + `"}]}`,
		`{"version":1,"packs":[{"name":"../x","bytes":100,"idxBytes":100,"tip":"` + id + `"}],"tips":["` + id + `"]}`,
		`{"version":1,"packs":[],"tips":[]}`, `{"version":2}`, `null`, `{`, `{"refs":[{"name":"refs/heads/a\nb"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := githistory.DecodeManifest(raw)
		if err != nil {
			if !errors.Is(err, githistory.ErrCorrupt) {
				t.Errorf("an error that is not ErrCorrupt: %v", err)
			}
			return
		}
		for _, p := range m.Packs {
			if strings.ContainsAny(p.Name, "/\\.") || p.Bytes <= 0 {
				t.Errorf("accepted pack %+v", p)
			}
		}
		for _, r := range m.Refs {
			if strings.ContainsAny(r.Name, " \n\r\x00^~:?*[\\") || strings.Contains(r.Name, "..") {
				t.Errorf("accepted ref %q", r.Name)
			}
		}
	})
}
