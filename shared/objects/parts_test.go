package objects_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/toolshed/toolshed/shared/awscall"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// stallSlack bounds how long a read or write held back by a few stalled
// attempts may take on a loaded machine (make test runs packages side by
// side): far less than without the stall bound, which is never.
const stallSlack = 10 * time.Second

// smallParts moves objects of 64 KiB or more in 16 KiB parts, so the
// tests move a few parts of little data.
var smallParts = objects.Parts{Threshold: 64 << 10, Size: 16 << 10, Concurrency: 3}

// TestLargeObjects moves objects in parts between the package and
// moto_server through a proxy: they arrive whole; with the client the
// functions use (awscall.LoadConfig: its per-attempt stall bound and
// retries) a part that stalls once is retried and S3 may take its time to
// put the parts together; a write that fails or is cancelled leaves no
// object and no upload in progress.
func TestLargeObjects(t *testing.T) {
	m := emulator.StartMoto(t)
	proxy := emulator.StartProxy(t, m.Endpoint)
	name := m.NewBucket(t)
	// The stall bound fails calls to an emulator slowed down by a loaded
	// machine now and then: only the tests of stalls use it.
	b := objects.NewParts(emulator.S3Client(proxy.URL()), name, smallParts)
	bounded := objects.NewParts(boundedClient(t, proxy.URL()), name, smallParts)
	ctx := context.Background()
	inProgress := func(t *testing.T) {
		t.Helper()
		out, err := m.S3().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &name})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range out.Uploads {
			t.Errorf("an upload of %s is still in progress", aws.ToString(u.Key))
		}
	}

	t.Run("round trip", func(t *testing.T) {
		tests := []struct {
			name  string
			size  int
			parts string // how many, as the ETag says; "": one request
		}{
			{"under the threshold", 64<<10 - 1, ""},
			{"at the threshold", 64 << 10, "4"},
			{"a short last part", 5*16<<10 + 7, "6"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				data := randomBytes(t, tt.size)
				tag, err := b.Put(ctx, tt.name, data, objects.PutOptions{ContentType: "application/zip", Metadata: map[string]string{"k": "v"}, Tagging: "state=current"})
				if err != nil {
					t.Fatal(err)
				}
				// S3 tells a multipart object by its ETag: "<hash>-<parts>".
				if _, parts, _ := strings.Cut(strings.Trim(tag, `"`), "-"); parts != tt.parts {
					t.Errorf("ETag %s, want %q parts", tag, tt.parts)
				}
				got, gotTag, err := b.Read(ctx, tt.name, "", int64(tt.size))
				if err != nil || !bytes.Equal(got, data) || gotTag != tag {
					t.Fatalf("read %d bytes (equal %t), ETag %s, %v; want %d bytes, ETag %s", len(got), bytes.Equal(got, data), gotTag, err, tt.size, tag)
				}
				if _, _, err := b.Read(ctx, tt.name, tag, int64(tt.size)); !errors.Is(err, objects.ErrNotModified) {
					t.Errorf("conditional read: %v, want ErrNotModified", err)
				}
				if _, _, err := b.Read(ctx, tt.name, "", int64(tt.size-1)); err == nil || !strings.Contains(err.Error(), "over the limit") {
					t.Errorf("read over the limit: %v", err)
				}
				if info, err := b.Head(ctx, tt.name); err != nil || info.Metadata["k"] != "v" || info.Size != int64(tt.size) {
					t.Errorf("head: %+v, %v", info, err)
				}
			})
		}
		inProgress(t)
	})

	uploadPart := func(r *http.Request) bool { return r.Method == http.MethodPut && r.URL.Query().Has("partNumber") }
	partGet := func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Query().Has("partNumber") }
	completeUpload := func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Query().Has("uploadId") }
	t.Run("stalls", func(t *testing.T) {
		data := randomBytes(t, 100<<10)
		if _, err := b.Put(ctx, "stalls", data, objects.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name   string
			read   bool                     // a read, else a write
			match  func(*http.Request) bool // the requests held back
			times  int                      // how many of them (-1: all)
			hold   time.Duration            // for how long
			failed bool
		}{
			{"a part of a write stalls once", false, uploadPart, 1, emulator.Forever, false},
			{"a part of a read stalls once", true, partGet, 1, emulator.Forever, false},
			{"a part of a write stalls for good", false, uploadPart, -1, emulator.Forever, true},
			{"a part of a read stalls for good", true, partGet, -1, emulator.Forever, true},
			{"putting the parts together takes S3 longer than a part may stall", false, completeUpload, -1, 2 * awscall.AttemptStall, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				proxy.Hold(tt.times, tt.match, tt.hold)
				start := time.Now()
				var err error
				if tt.read {
					var got []byte
					got, _, err = bounded.Read(ctx, "stalls", "", 1<<20)
					if err == nil && !bytes.Equal(got, data) {
						t.Errorf("read %d bytes, not what was written", len(got))
					}
				} else {
					_, err = bounded.Put(ctx, "stalls", data, objects.PutOptions{})
				}
				took := time.Since(start)
				proxy.Pass()
				switch {
				case !tt.failed && err != nil:
					t.Errorf("failed after %v: %v", took, err)
				case tt.failed && (!errors.Is(err, store.ErrStorage) || errors.Is(err, store.ErrMaybeDone)):
					t.Errorf("got %v, want ErrStorage (and not ErrMaybeDone: nothing was written)", err)
				case took < awscall.AttemptStall || took > stallSlack:
					t.Errorf("took %v, want the stall bound of a part's attempts (%v each) or a little more", took, awscall.AttemptStall)
				}
				if got, _, err := b.Read(ctx, "stalls", "", 1<<20); err != nil || !bytes.Equal(got, data) {
					t.Errorf("after: read %d bytes, %v; want the object as it was", len(got), err)
				}
				inProgress(t)
			})
		}
	})

	t.Run("interrupted writes leave nothing", func(t *testing.T) {
		big := randomBytes(t, 100<<10)
		if _, err := b.Put(ctx, "kept", big, objects.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		// A write whose caller gives up while its second part is on the way.
		cancelled, cancel := context.WithCancel(ctx)
		proxy.Hold(-1, func(r *http.Request) bool {
			if uploadPart(r) && r.URL.Query().Get("partNumber") == "2" {
				cancel()
				return true
			}
			return false
		}, emulator.Forever)
		_, err := b.Put(cancelled, "never", big, objects.PutOptions{})
		proxy.Pass()
		if !errors.Is(err, store.ErrStorage) || errors.Is(err, store.ErrMaybeDone) || !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v, want ErrStorage and context.Canceled, not ErrMaybeDone", err)
		}
		// A conditional write that loses.
		if _, err := b.Put(ctx, "kept", randomBytes(t, 100<<10), objects.PutOptions{IfNoneMatch: "*"}); !errors.Is(err, objects.ErrPrecondition) {
			t.Errorf("If-None-Match on an existing object: %v, want ErrPrecondition", err)
		}
		if _, err := b.Head(ctx, "never"); !errors.Is(err, objects.ErrNotFound) {
			t.Errorf("the cancelled write left an object: %v", err)
		}
		if got, _, err := b.Read(ctx, "kept", "", 1<<20); err != nil || !bytes.Equal(got, big) {
			t.Errorf("the object a write lost on changed: %v", err)
		}
		inProgress(t)
	})
}

// boundedClient is the S3 client of deployed functions (awscall.LoadConfig,
// objects.NewClient) for endpoint.
func boundedClient(t *testing.T, endpoint string) *s3.Client {
	t.Helper()
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "dummy", "AWS_SECRET_ACCESS_KEY": "dummy", "AWS_REGION": "us-east-1"} {
		t.Setenv(k, v)
	}
	cfg, err := awscall.LoadConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return objects.NewClient(cfg, endpoint)
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	return b
}
