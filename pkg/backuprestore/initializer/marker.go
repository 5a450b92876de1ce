package initializer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// markerFile is the owner marker inside the data directory. It is the namespace safe-guard: a volume
// that was created for another Etcd (a re-used PVC, a wrongly mounted disk) must never be served as
// this cluster's data. etcd ignores unknown files in its data directory.
const markerFile = "owner"

// ownerMatches tells whether the data directory may be used by owner: there is no marker (data written
// before markers existed, or no owner configured) or it names owner.
func ownerMatches(dataDir, owner string) bool {
	if owner == "" {
		return true
	}
	got, err := os.ReadFile(filepath.Join(dataDir, markerFile))
	if err != nil {
		return os.IsNotExist(err)
	}
	return string(bytes.TrimSpace(got)) == owner
}

// writeMarker records owner in the data directory, creating the directory if needed.
func writeMarker(dataDir, owner string) error {
	if owner == "" {
		return nil
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("creating data dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, markerFile), []byte(owner+"\n"), 0o600); err != nil {
		return fmt.Errorf("writing the owner marker: %w", err)
	}
	return nil
}
