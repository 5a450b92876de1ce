package node

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// Every container start renders the pod's volumes again while the pod's other containers read them (the
// sidecar read an empty service-account ca.crt while the etcd container started): a reader must always see
// a complete file, the old or the new one.
func TestWriteVolumeNeverShowsAPartialFile(t *testing.T) {
	dir := t.TempDir()
	contents := [][]byte{bytes.Repeat([]byte("a"), 256<<10), bytes.Repeat([]byte("b"), 256<<10)}
	if err := writeVolume(dir, []volumeFile{{path: "ca.crt", data: contents[0], mode: 0o644}}, nil); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var torn atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			data, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
			if err != nil || (!bytes.Equal(data, contents[0]) && !bytes.Equal(data, contents[1])) {
				torn.Add(1)
			}
		}
	}()
	for i := range 300 {
		if err := writeVolume(dir, []volumeFile{{path: "ca.crt", data: contents[i%2], mode: 0o644}}, nil); err != nil {
			t.Fatal(err)
		}
		// The same content again: left alone.
		if err := writeVolume(dir, []volumeFile{{path: "ca.crt", data: contents[i%2], mode: 0o644}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if n := torn.Load(); n > 0 {
		t.Fatalf("a reader saw a missing or partial file %d times", n)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("want only ca.crt left in the volume, got %v (%v)", entries, err)
	}
	info, err := os.Stat(filepath.Join(dir, "ca.crt"))
	if err != nil || info.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v (%v)", info.Mode(), err)
	}
}
