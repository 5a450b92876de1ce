package snapstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Keys of the backup secret shared by several providers.
const (
	// secretKeyBucketName is added by Gardener to every backup secret.
	secretKeyBucketName = "bucketName"
)

// secretDir reads the backup secret as mounted by Kubernetes: one file per key. Values of scalar keys
// are trimmed, as secrets created with `echo` commonly end in a newline.
type secretDir struct {
	dir string
}

// required returns a key's trimmed value or an error naming the key and the directory.
func (s secretDir) required(key string) (string, error) {
	v, ok, err := s.optional(key)
	if err != nil {
		return "", err
	}
	if !ok || v == "" {
		return "", fmt.Errorf("backup secret in %s lacks the required key %q", s.dir, key)
	}
	return v, nil
}

// optional returns a key's trimmed value and whether the key exists.
func (s secretDir) optional(key string) (string, bool, error) {
	data, ok, err := s.raw(key)
	return strings.TrimSpace(string(data)), ok, err
}

// raw returns a key's bytes unchanged (certificates, JSON documents).
func (s secretDir) raw(key string) ([]byte, bool, error) {
	if s.dir == "" {
		return nil, false, nil
	}
	data, err := os.ReadFile(filepath.Join(s.dir, key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading key %q of the backup secret in %s: %w", key, s.dir, err)
	}
	return data, true, nil
}

// boolean reads an optional "true"/"false" key; a missing key is false.
func (s secretDir) boolean(key string) (bool, error) {
	v, ok, err := s.optional(key)
	if err != nil || !ok || v == "" {
		return false, err
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("key %q of the backup secret in %s: %q is not a boolean", key, s.dir, v)
	}
	return b, nil
}

// checkDir fails early with a clear message when a provider needs the secret but it is not mounted.
func (s secretDir) checkDir(provider Provider) error {
	if s.dir == "" {
		return fmt.Errorf("storage provider %s needs the backup secret directory, none configured", provider)
	}
	info, err := os.Stat(s.dir)
	if err != nil {
		return fmt.Errorf("backup secret directory for %s: %w", provider, err)
	}
	if !info.IsDir() {
		return fmt.Errorf("backup secret path %s for %s is not a directory", s.dir, provider)
	}
	return nil
}
