package wiring

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/toolshed/toolshed/shared/workspace"
)

// Workspaces returns the tenants' file-io workspaces with a quota: under
// the bucket's workspace/ prefix when TOOLSHED_BUCKET is set, otherwise in
// the data directory's workspace/ folder, where what interrupted writes
// left is swept away first (workspace.Dir.Sweep).
func (e *Env) Workspaces(ctx context.Context, quota workspace.Quota) (workspace.Files, error) {
	if e.Config.Bucket != "" {
		bucket, err := e.S3(ctx)
		if err != nil {
			return nil, err
		}
		return workspace.NewBucket(bucket, quota), nil
	}
	dir := workspace.NewDir(filepath.Join(e.Config.DataDir, "workspace"), quota)
	switch n, err := dir.Sweep(); {
	case err != nil:
		return nil, fmt.Errorf("remove what interrupted writes left: %w", err)
	case n > 0:
		e.Log.Info("file-io: removed what interrupted writes left", "files", n)
	}
	return dir, nil
}
