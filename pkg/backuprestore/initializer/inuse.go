package initializer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
	"golang.org/x/sys/unix"
)

// ErrDataDirInUse is reported when etcd (or anything else) runs on the data directory: nothing may be
// decided about, moved or restored over a directory that a running member writes to. The sidecar's
// HTTP API answers it with 409 Conflict.
var ErrDataDirInUse = errors.New("etcd is running on the data directory")

// CheckNotInUse returns an error wrapping ErrDataDirInUse when a process holds one of the locks etcd takes
// on a data directory it runs on: the flock of the bbolt database (bbolt takes it exclusively for a
// writable open) and the file locks of the WAL files it appends to (etcd's fileutil.TryLockFile). It takes
// and releases the same locks itself, so it sees etcd in this process too (tests run etcd embedded).
func CheckNotInUse(dataDir string) error {
	if err := checkDBUnlocked(dataDir); err != nil {
		return err
	}
	wals, err := filepath.Glob(filepath.Join(walDir(dataDir), "*.wal"))
	if err != nil {
		return err
	}
	for _, w := range wals {
		l, err := fileutil.TryLockFile(w, os.O_RDWR, fileutil.PrivateFileMode)
		switch {
		case errors.Is(err, fileutil.ErrLocked):
			return fmt.Errorf("%w %s: WAL file %s is locked", ErrDataDirInUse, dataDir, filepath.Base(w))
		case errors.Is(err, os.ErrNotExist):
			continue // released and removed meanwhile
		case err != nil:
			return fmt.Errorf("checking the lock of WAL file %s: %w", w, err)
		}
		_ = l.Close()
	}
	return nil
}

// checkDBUnlocked tries bbolt's own shared flock on the database without waiting.
func checkDBUnlocked(dataDir string) error {
	path := dbPath(dataDir)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking the database lock: %w", err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("%w %s: the database is locked", ErrDataDirInUse, dataDir)
		}
		return fmt.Errorf("checking the database lock of %s: %w", path, err)
	}
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}
