package boltstream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// snapshotOf streams a Maintenance.Snapshot through a Scanner in irregular write sizes and returns the
// scanned revision and the database bytes (trailer stripped).
func snapshotOf(t *testing.T, cli *clientv3.Client) (int64, []byte) {
	t.Helper()
	rc, err := cli.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	stream, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	s := NewScanner()
	rng := rand.New(rand.NewPCG(1, 2))
	for rest := stream; len(rest) > 0; {
		n := min(len(rest), 1+rng.IntN(9000))
		if _, err := s.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	rev, err := s.Revision()
	if err != nil {
		t.Fatalf("Revision: %v", err)
	}
	return rev, stream[:len(stream)-sha256.Size]
}

// boltRevision is the oracle: it opens the database with bbolt and computes etcd's revision rule.
func boltRevision(t *testing.T, db []byte) int64 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
	if err := os.WriteFile(path, db, 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rev := int64(1)
	err = b.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket([]byte(keyBucket)).Cursor().Last(); k != nil {
			rev = max(rev, int64(binary.BigEndian.Uint64(k[:8])))
		}
		for _, name := range []string{finishedCompactKey, scheduledCompactKey} {
			if v := tx.Bucket([]byte(metaBucket)).Get([]byte(name)); v != nil {
				rev = max(rev, int64(binary.BigEndian.Uint64(v[:8])))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func currentRevision(t *testing.T, cli *clientv3.Client) int64 {
	t.Helper()
	resp, err := cli.Get(t.Context(), "probe")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

func TestRevisionOfQuiescentDatabases(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	ctx := t.Context()
	check := func(name string) {
		t.Helper()
		got, db := snapshotOf(t, cli)
		if want := currentRevision(t, cli); got != want {
			t.Fatalf("%s: scanned revision %d, etcd is at %d", name, got, want)
		}
		if oracle := boltRevision(t, db); got != oracle {
			t.Fatalf("%s: scanned revision %d, bbolt says %d", name, got, oracle)
		}
	}
	check("empty database")
	for i := range 20 {
		mustPut(t, cli, fmt.Sprintf("small/%d", i), "v")
	}
	check("inline key bucket")
	value := strings.Repeat("x", 700)
	for i := range 3000 {
		mustPut(t, cli, fmt.Sprintf("many/%05d", i%700), value)
	}
	check("multi-level key bucket")
	mustPut(t, cli, "large", strings.Repeat("L", 300<<10))
	check("overflow pages")
	if _, err := cli.Delete(ctx, "many/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	rev := currentRevision(t, cli)
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	check("newest revision a compacted tombstone")
}

// TestRevisionIsAtomicUnderConcurrentWrites snapshots while writers run: the scanned revision must be
// the revision of the data in the snapshot, whatever etcd reached meanwhile.
func TestRevisionIsAtomicUnderConcurrentWrites(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				_, _ = cli.Put(ctx, fmt.Sprintf("w%d/%d", w, i%200), strings.Repeat("v", 200))
			}
		})
	}
	defer func() { cancel(); wg.Wait() }()
	for range 5 {
		before := currentRevision(t, cli)
		got, db := snapshotOf(t, cli)
		after := currentRevision(t, cli)
		if oracle := boltRevision(t, db); got != oracle {
			t.Fatalf("scanned revision %d, the snapshot's data is at %d", got, oracle)
		}
		if got < before || got > after {
			t.Fatalf("scanned revision %d outside [%d, %d]", got, before, after)
		}
	}
}

func TestRevisionRejectsNonDatabases(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	mustPut(t, cli, "k", "v")
	_, db := snapshotOf(t, cli)
	for name, data := range map[string][]byte{
		"empty":           nil,
		"not bbolt":       bytes.Repeat([]byte("garbage!"), 4096),
		"meta pages only": db[:2*4096],
		"truncated":       db[:len(db)/2],
	} {
		s := NewScanner()
		_, _ = s.Write(data)
		if rev, err := s.Revision(); err == nil {
			t.Errorf("%s: want an error, got revision %d", name, rev)
		}
	}
}

func mustPut(t *testing.T, cli *clientv3.Client, k, v string) {
	t.Helper()
	if _, err := cli.Put(t.Context(), k, v); err != nil {
		t.Fatal(err)
	}
}
