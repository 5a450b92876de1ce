package snapstore

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// linkSecret lays out keys as the kubelet mounts a secret: values in a data directory, `..data` pointing
// at it, one symlink per key through `..data`.
func linkSecret(t *testing.T, dir, version string, keys map[string]string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(dir, version), 0o700); err != nil {
		t.Fatal(err)
	}
	for k, v := range keys {
		if err := os.WriteFile(filepath.Join(dir, version, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(dir, k)); err != nil {
			if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(version, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

func digestOf(t *testing.T, dir string) [32]byte {
	t.Helper()
	d, err := secretDigest(dir)
	if err != nil {
		t.Fatalf("secretDigest(%s): %v", dir, err)
	}
	return d
}

func TestSecretDigestFollowsContentNotTimes(t *testing.T) {
	dir := t.TempDir()
	linkSecret(t, dir, "..v1", map[string]string{"accessKeyID": "a", "secretAccessKey": "s"})
	first := digestOf(t, dir)

	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "..v1", "secretAccessKey"), later, later); err != nil {
		t.Fatal(err)
	}
	linkSecret(t, dir, "..v2", map[string]string{"accessKeyID": "a", "secretAccessKey": "s"})
	if got := digestOf(t, dir); got != first {
		t.Errorf("same keys and values in a new data directory: digest changed, want it unchanged")
	}

	linkSecret(t, dir, "..v3", map[string]string{"accessKeyID": "a", "secretAccessKey": "rotated"})
	if got := digestOf(t, dir); got == first {
		t.Errorf("a changed value behind the swapped ..data link: digest unchanged, want it changed")
	}
}

func TestSecretDigestSeparatesKeysFromValues(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	linkSecret(t, a, "..v1", map[string]string{"ab": "c"})
	linkSecret(t, b, "..v1", map[string]string{"a": "bc"})
	if digestOf(t, a) == digestOf(t, b) {
		t.Errorf("key ab=c and key a=bc have the same digest, want different")
	}
}

func TestSecretDigestIgnoresDanglingKeys(t *testing.T) {
	dir := t.TempDir()
	linkSecret(t, dir, "..v1", map[string]string{"accessKeyID": "a"})
	want := digestOf(t, dir)
	// A key removed by the swap whose link the kubelet has not deleted yet.
	if err := os.Symlink(filepath.Join("..data", "gone"), filepath.Join(dir, "gone")); err != nil {
		t.Fatal(err)
	}
	if got := digestOf(t, dir); got != want {
		t.Errorf("a dangling key link changed the digest, want it ignored")
	}
}
