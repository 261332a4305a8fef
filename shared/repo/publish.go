package repo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// ObjectStore is the part of the S3 client publishing uses.
type ObjectStore interface {
	ObjectGetter
	PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, opts ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, opts ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	PutObjectTagging(ctx context.Context, in *s3.PutObjectTaggingInput, opts ...func(*s3.Options)) (*s3.PutObjectTaggingOutput, error)
}

// Lifecycle tagging: a zip that is no longer current is tagged
// StateTag=Retired, and the bucket's lifecycle rule deletes retired
// snapshots once they are old enough (infra/).
const (
	StateTag = "toolshed-snapshot"
	Current  = "current"
	Retired  = "retired"
)

// Object metadata on each zip, so a rollback can rebuild the pointer.
const (
	metaCommit = "commit"
	metaFiles  = "files"
	metaBytes  = "bytes"
	// metaCreated orders snapshots uploaded within the same second (S3's
	// LastModified has one-second resolution).
	metaCreated = "created"
)

// namePattern is what tenant names and commit ids may look like: they
// become parts of object keys.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$`)

// CheckName refuses a tenant or commit that cannot be part of a key.
func CheckName(what, name string) error {
	if !namePattern.MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("%s %q: use letters, digits, '.', '_', '+' and '-' (at most 128, no '..')", what, name)
	}
	return nil
}

// PublishInput is what Publish packs and where it goes.
type PublishInput struct {
	Bucket, Tenant, Commit string
	Dir                    string   // the repository's root
	Paths                  []string // files to pack, relative to Dir
	MaxBytes               int64    // refuse more than this many bytes of files
	Now                    time.Time
}

// Published is what Publish did.
type Published struct {
	Pointer  Pointer
	Skipped  []string // paths that were not packed (see PackStats)
	Previous string   // the zip key the pointer named before, "" for none
	// RetireErr is set when the previous zip could not be tagged retired
	// (the push itself succeeded; that zip is just kept longer).
	RetireErr error
}

// Publish packs the files, uploads the zip, and only then moves the
// tenant's pointer to it: a reader sees the old snapshot or the new one,
// never half of one. The previous zip is tagged retired.
func Publish(ctx context.Context, c ObjectStore, in PublishInput) (Published, error) {
	if err := CheckName("tenant", in.Tenant); err != nil {
		return Published{}, err
	}
	if err := CheckName("commit", in.Commit); err != nil {
		return Published{}, err
	}
	var zipData bytes.Buffer
	st, err := Pack(&zipData, in.Dir, in.Paths, in.MaxBytes)
	if err != nil {
		return Published{Skipped: st.Skipped}, err
	}
	p := Pointer{
		Commit:   in.Commit,
		Key:      ZipKey(in.Tenant, in.Commit),
		Files:    st.Files,
		Bytes:    st.Bytes,
		ZipBytes: int64(zipData.Len()),
		Created:  in.Now.UTC(),
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{
		Bucket:      &in.Bucket,
		Key:         &p.Key,
		Body:        bytes.NewReader(zipData.Bytes()),
		ContentType: aws.String("application/zip"),
		Metadata: map[string]string{
			metaCommit:  p.Commit,
			metaFiles:   strconv.Itoa(p.Files),
			metaBytes:   strconv.FormatInt(p.Bytes, 10),
			metaCreated: p.Created.Format(time.RFC3339Nano),
		},
		Tagging: aws.String(StateTag + "=" + Current),
	})
	if err != nil {
		return Published{Skipped: st.Skipped}, fmt.Errorf("upload %s: %w", p.Key, err)
	}
	prev, err := movePointer(ctx, c, in.Bucket, in.Tenant, p)
	out := Published{Pointer: p, Skipped: st.Skipped, Previous: prev}
	if err != nil {
		return out, err
	}
	if prev != "" && prev != p.Key {
		out.RetireErr = tag(ctx, c, in.Bucket, prev, Retired)
	}
	return out, nil
}

// ReadPointer returns the tenant's pointer; ok is false when there is none.
func ReadPointer(ctx context.Context, c ObjectGetter, bucket, tenant string) (p Pointer, ok bool, err error) {
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String(PointerKey(tenant))})
	if HTTPStatus(err) == 404 {
		return Pointer{}, false, nil
	}
	if err != nil {
		return Pointer{}, false, fmt.Errorf("read %s: %w", PointerKey(tenant), err)
	}
	p, err = decodePointer(out.Body, PointerKey(tenant))
	return p, err == nil, err
}

// movePointer writes the tenant's pointer and returns the key the old one
// named ("" for none).
func movePointer(ctx context.Context, c ObjectStore, bucket, tenant string, p Pointer) (string, error) {
	old, _, err := ReadPointer(ctx, c, bucket, tenant)
	if err != nil {
		return "", err
	}
	body, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return "", err
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{
		Bucket:       &bucket,
		Key:          aws.String(PointerKey(tenant)),
		Body:         bytes.NewReader(body),
		ContentType:  aws.String("application/json"),
		CacheControl: aws.String("no-cache"),
	})
	if err != nil {
		return "", fmt.Errorf("write %s: %w", PointerKey(tenant), err)
	}
	return old.Key, nil
}

func tag(ctx context.Context, c ObjectStore, bucket, key, state string) error {
	_, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{
		Bucket:  &bucket,
		Key:     &key,
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String(StateTag), Value: aws.String(state)}}},
	})
	if err != nil {
		return fmt.Errorf("tag %s %s: %w", key, state, err)
	}
	return nil
}

// SnapshotInfo is one zip of a tenant.
type SnapshotInfo struct {
	Commit   string
	Key      string
	ZipBytes int64
	Modified time.Time
	Current  bool
}

// List returns the tenant's snapshots, newest first, marking the current one.
func List(ctx context.Context, c ObjectStore, bucket, tenant string) ([]SnapshotInfo, error) {
	if err := CheckName("tenant", tenant); err != nil {
		return nil, err
	}
	cur, _, err := ReadPointer(ctx, c, bucket, tenant)
	if err != nil {
		return nil, err
	}
	var out []SnapshotInfo
	in := &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String(TenantPrefix(tenant))}
	for {
		page, err := c.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", TenantPrefix(tenant), err)
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			commit, ok := strings.CutSuffix(strings.TrimPrefix(key, TenantPrefix(tenant)), ".zip")
			if !ok || strings.Contains(commit, "/") {
				continue
			}
			out = append(out, SnapshotInfo{
				Commit: commit, Key: key, ZipBytes: aws.ToInt64(o.Size),
				Modified: aws.ToTime(o.LastModified), Current: key == cur.Key,
			})
		}
		if !aws.ToBool(page.IsTruncated) {
			break
		}
		in.ContinuationToken = page.NextContinuationToken
	}
	// Uploads within the same second are ordered by the time Publish
	// recorded on them.
	perSecond := map[int64]int{}
	for _, o := range out {
		perSecond[o.Modified.Unix()]++
	}
	for i := range out {
		if perSecond[out[i].Modified.Unix()] > 1 {
			head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &out[i].Key})
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", out[i].Key, err)
			}
			if t, err := time.Parse(time.RFC3339Nano, head.Metadata[metaCreated]); err == nil {
				out[i].Modified = t
			}
		}
	}
	slices.SortStableFunc(out, func(a, b SnapshotInfo) int {
		if c := b.Modified.Compare(a.Modified); c != 0 {
			return c
		}
		return strings.Compare(b.Commit, a.Commit)
	})
	return out, nil
}

// ErrNoSnapshot means a rollback target does not exist.
var ErrNoSnapshot = errors.New("no such snapshot")

// Rollback moves the tenant's pointer to the snapshot of commit, or, when
// commit is "", to the newest snapshot older than the current one. The
// snapshot left is tagged retired and the one chosen current again.
func Rollback(ctx context.Context, c ObjectStore, bucket, tenant, commit string, now time.Time) (Pointer, error) {
	if commit == "" {
		list, err := List(ctx, c, bucket, tenant)
		if err != nil {
			return Pointer{}, err
		}
		i := slices.IndexFunc(list, func(s SnapshotInfo) bool { return s.Current })
		if i < 0 || i+1 >= len(list) {
			return Pointer{}, fmt.Errorf("%w: no snapshot older than the current one", ErrNoSnapshot)
		}
		commit = list[i+1].Commit
	}
	if err := CheckName("commit", commit); err != nil {
		return Pointer{}, err
	}
	key := ZipKey(tenant, commit)
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if HTTPStatus(err) == 404 {
		return Pointer{}, fmt.Errorf("%w: %s", ErrNoSnapshot, key)
	}
	if err != nil {
		return Pointer{}, fmt.Errorf("read %s: %w", key, err)
	}
	files, _ := strconv.Atoi(head.Metadata[metaFiles])
	size, _ := strconv.ParseInt(head.Metadata[metaBytes], 10, 64)
	p := Pointer{Commit: commit, Key: key, Files: files, Bytes: size, ZipBytes: aws.ToInt64(head.ContentLength), Created: now.UTC()}
	if err := tag(ctx, c, bucket, key, Current); err != nil {
		return Pointer{}, err
	}
	prev, err := movePointer(ctx, c, bucket, tenant, p)
	if err != nil {
		return Pointer{}, err
	}
	if prev != "" && prev != key {
		if err := tag(ctx, c, bucket, prev, Retired); err != nil {
			return p, err
		}
	}
	return p, nil
}
