package contextindex

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/toolshed/toolshed/shared/repo"
)

// DirBlobs keeps objects as files under a directory (the local data
// directory). ETags are content hashes. Writes go to a temporary file
// that is renamed into place, so readers never see half a file.
type DirBlobs struct {
	Root string
	mu   sync.Mutex // orders conditional writes within the process
}

var _ Blobs = (*DirBlobs)(nil)

func (d *DirBlobs) path(key string) string { return filepath.Join(d.Root, filepath.FromSlash(key)) }

func etagOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// Get implements Blobs.
func (d *DirBlobs) Get(_ context.Context, key, etag string) ([]byte, string, error) {
	data, err := os.ReadFile(d.path(key))
	if err != nil {
		return nil, "", fmt.Errorf("read index file %s: %w", key, err)
	}
	tag := etagOf(data)
	if etag != "" && etag == tag {
		return nil, tag, ErrNotModified
	}
	return data, tag, nil
}

// Put implements Blobs.
func (d *DirBlobs) Put(_ context.Context, key string, data []byte, match string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.path(key)
	if match != "" {
		cur, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if match != IfAbsent {
				return "", fmt.Errorf("write index file %s: %w", key, ErrPrecondition)
			}
		case err != nil:
			return "", fmt.Errorf("write index file %s: %w", key, err)
		case match == IfAbsent || etagOf(cur) != match:
			return "", fmt.Errorf("write index file %s: %w", key, ErrPrecondition)
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("write index file %s: %w", key, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("write index file %s: %w", key, err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write index file %s: %w", key, err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("write index file %s: %w", key, err)
	}
	return etagOf(data), nil
}

// RemoveOthers deletes every folder under prefix except keep (local code
// indexes of earlier versions).
func (d *DirBlobs) RemoveOthers(prefix, keep string) error {
	entries, err := os.ReadDir(d.path(prefix))
	if err != nil {
		return fmt.Errorf("clean index folder %s: %w", prefix, err)
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() && e.Name() != keep && e.Name() != "memory" {
			errs = append(errs, os.RemoveAll(filepath.Join(d.path(prefix), e.Name())))
		}
	}
	return errors.Join(errs...)
}

// S3Blobs keeps objects in an S3 bucket under a key prefix ("indexes/").
type S3Blobs struct {
	Client *s3.Client
	Bucket string
	Prefix string
}

var _ Blobs = (*S3Blobs)(nil)

// Get implements Blobs with a conditional GET (If-None-Match).
func (b *S3Blobs) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(b.Bucket), Key: aws.String(b.Prefix + key)}
	if etag != "" {
		in.IfNoneMatch = aws.String(etag)
	}
	out, err := b.Client.GetObject(ctx, in)
	if err != nil {
		switch repo.HTTPStatus(err) {
		case http.StatusNotModified:
			return nil, etag, ErrNotModified
		case http.StatusNotFound:
			return nil, "", fmt.Errorf("s3 get %s: %w", b.Prefix+key, fs.ErrNotExist)
		}
		return nil, "", fmt.Errorf("s3 get %s: %w", b.Prefix+key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, "", fmt.Errorf("s3 get %s: %w", b.Prefix+key, err)
	}
	return data, aws.ToString(out.ETag), nil
}

// Put implements Blobs with a conditional PUT (If-Match, If-None-Match).
func (b *S3Blobs) Put(ctx context.Context, key string, data []byte, match string) (string, error) {
	in := &s3.PutObjectInput{Bucket: aws.String(b.Bucket), Key: aws.String(b.Prefix + key), Body: bytes.NewReader(data)}
	switch match {
	case "":
	case IfAbsent:
		in.IfNoneMatch = aws.String("*")
	default:
		in.IfMatch = aws.String(match)
	}
	if strings.HasSuffix(key, ".json") {
		in.ContentType = aws.String("application/json")
	}
	out, err := b.Client.PutObject(ctx, in)
	if err != nil {
		switch repo.HTTPStatus(err) {
		case http.StatusPreconditionFailed, http.StatusConflict, http.StatusNotFound:
			// 404: If-Match on a key that is gone; 409: a concurrent
			// conditional write.
			return "", fmt.Errorf("s3 put %s: %w", b.Prefix+key, ErrPrecondition)
		}
		return "", fmt.Errorf("s3 put %s: %w", b.Prefix+key, err)
	}
	return aws.ToString(out.ETag), nil
}
