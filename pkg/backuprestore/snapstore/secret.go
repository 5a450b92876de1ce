package snapstore

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// secretDir reads the backup secret as mounted by Kubernetes: one file per key, or values handed over
// otherwise (Config.SecretValues), which win. Values of scalar keys are trimmed, as secrets created with
// `echo` commonly end in a newline. The keys are those of package backupsecret.
type secretDir struct {
	dir    string
	values map[string]string
}

// required returns a key's trimmed value or an error naming the key and the directory.
func (s secretDir) required(key string) (string, error) {
	v, ok, err := s.optional(key)
	if err != nil {
		return "", err
	}
	if !ok || v == "" {
		return "", fmt.Errorf("backup secret %s lacks the required key %q", s, key)
	}
	return v, nil
}

// requiredInto reads required keys into their destinations, in sorted key order so that the first
// missing key reported does not vary.
func (s secretDir) requiredInto(dsts map[string]*string) error {
	for _, key := range slices.Sorted(maps.Keys(dsts)) {
		v, err := s.required(key)
		if err != nil {
			return err
		}
		*dsts[key] = v
	}
	return nil
}

// optional returns a key's trimmed value and whether the key exists.
func (s secretDir) optional(key string) (string, bool, error) {
	data, ok, err := s.raw(key)
	return strings.TrimSpace(string(data)), ok, err
}

// raw returns a key's bytes unchanged (certificates, JSON documents).
func (s secretDir) raw(key string) ([]byte, bool, error) {
	if v, ok := s.values[key]; ok {
		return []byte(v), true, nil
	}
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

// absent tells whether no backup secret is configured at all (no directory, no values): the pod then
// uses its own identity where the provider allows it (ambient credentials).
func (s secretDir) absent() bool { return s.dir == "" && len(s.values) == 0 }

// path is the file of a key in the mounted directory, for keys an SDK reads itself (token files).
func (s secretDir) path(key string) string { return filepath.Join(s.dir, key) }

// checkDir fails early with a clear message when a provider needs the secret but it is not mounted.
func (s secretDir) checkDir(provider Provider) error {
	if s.dir == "" && len(s.values) > 0 {
		return nil
	}
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

// String names the secret in errors: its directory, or the values' origin.
func (s secretDir) String() string {
	if s.dir == "" && len(s.values) > 0 {
		return "given as values (environment)"
	}
	return "in " + s.dir
}
