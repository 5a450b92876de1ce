package snapstore

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// secretDigest is a hash of the backup secret's keys and values as mounted in dir: what the store would
// be opened with now. It compares content, never modification times: Kubernetes replaces a mounted
// secret by pointing the `..data` symlink at a new timestamped directory (the key files are symlinks
// through `..data`), so the times of the files seen through the links say nothing reliable, and a
// rewrite with the same content must not reopen the store.
//
// The entries whose names start with ".." are Kubernetes' own bookkeeping (`..data` and the timestamped
// directories) and are left out; every other entry is read through its symlink. A key whose link points
// nowhere (a key being removed mid-swap) counts as absent. Values are hashed, never kept or logged.
func secretDigest(dir string) ([sha256.Size]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("reading the backup secret directory %s: %w", dir, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "..") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	h := sha256.New()
	for _, name := range names {
		path := filepath.Join(dir, name)
		info, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return [sha256.Size]byte{}, fmt.Errorf("key %q of the backup secret in %s: %w", name, dir, err)
		}
		if info.IsDir() {
			continue
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return [sha256.Size]byte{}, fmt.Errorf("reading key %q of the backup secret in %s: %w", name, dir, err)
		}
		// Lengths first, so that no two different secrets concatenate to the same bytes.
		_ = binary.Write(h, binary.BigEndian, uint64(len(name)))
		h.Write([]byte(name))
		_ = binary.Write(h, binary.BigEndian, uint64(len(data)))
		h.Write(data)
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}
