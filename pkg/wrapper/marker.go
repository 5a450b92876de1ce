package wrapper

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// CleanExitMarker is the file that records a graceful stop of etcd. It lives on the data volume so that it
// survives the container restart that follows.
const CleanExitMarker = "etcd-wrapper-clean-exit"

// consumeCleanExit reports whether the previous etcd stopped gracefully and removes the marker, so that a
// crash of the etcd about to start is not mistaken for a graceful stop next time.
func consumeCleanExit(dir string) (bool, error) {
	err := os.Remove(filepath.Join(dir, CleanExitMarker))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("removing the clean-exit marker: %w", err)
	}
}

// markCleanExit records a graceful stop; it is written after etcd has stopped, so it never claims more.
func markCleanExit(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, CleanExitMarker), nil, 0o600); err != nil {
		return fmt.Errorf("writing the clean-exit marker: %w", err)
	}
	return nil
}
