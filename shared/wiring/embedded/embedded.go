// Package embedded gives a process's wiring.Env the embedded store (a
// bbolt file in the data directory, shared/store/boltstore) when the
// configuration chooses it (TOOLSHED_STORE=bolt). It stands apart from
// wiring so that no Lambda function links bbolt: the processes that may
// own the file (the local server, scripts/apikeys) call Use; the others
// connect to DynamoDB through wiring alone.
package embedded

import (
	"fmt"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Use opens the embedded store in the data directory and hands it to env
// (released when env closes), when the configuration chooses it. An
// error wraps boltstore.ErrLocked when another process holds the file.
func Use(env *wiring.Env) error {
	if env.Config.Store != config.StoreBolt {
		return nil
	}
	db, err := boltstore.OpenIn(env.Config.DataDir)
	if err != nil {
		return fmt.Errorf("open storage: %w", err)
	}
	env.UseStores(db.Stores(), db.Close)
	return nil
}
