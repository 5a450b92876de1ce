package httpapi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// DataDirOnlyInitializer is the interim initializer until the initialization decision table (package initializer) is wired in: it
// only checks that the data directory is missing, empty, or shaped like an etcd member directory
// (member/wal and member/snap/db). It restores nothing, joins nothing and does not verify WAL or database
// contents, so a member with damaged data is started as it is. Both modes do the same checks.
type DataDirOnlyInitializer struct {
	DataDir string
}

// Initialize implements Initializer.
func (d DataDirOnlyInitializer) Initialize(_ context.Context, _ podwire.InitMode) error {
	entries, err := os.ReadDir(d.DataDir)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil // a fresh member: etcd creates the directory
	}
	if err != nil {
		return fmt.Errorf("reading data dir %s: %w", d.DataDir, err)
	}
	for _, want := range []string{"member/wal", "member/snap/db"} {
		if _, err := os.Stat(filepath.Join(d.DataDir, want)); err != nil {
			return fmt.Errorf("data dir %s is neither empty nor an etcd data dir: %s: %w", d.DataDir, want, err)
		}
	}
	return nil
}
