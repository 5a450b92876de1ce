package snapshotformat

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// realSnapshot returns a Maintenance.Snapshot stream of an etcd holding the test workload.
func realSnapshot(t *testing.T) []byte {
	t.Helper()
	ctx := t.Context()
	cli := startEtcd(t)
	writeWorkload(ctx, t, cli)
	rc, err := cli.Snapshot(ctx)
	if err != nil {
		t.Fatalf("Maintenance.Snapshot: %v", err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading snapshot stream: %v", err)
	}
	return data
}

func TestFullSnapshotReaderOnRealSnapshot(t *testing.T) {
	stream := realSnapshot(t)
	snap := snapshot.NewFull(10, time.Now(), snapshot.CompressionNone, false)

	t.Run("strip trailer yields a valid bbolt database", func(t *testing.T) {
		// A one-byte reader exercises the hold-back window across reads of every size.
		r := NewFullSnapshotReader(iotest.OneByteReader(bytes.NewReader(stream)), snap.SnapName, false)
		db, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("reading: %v", err)
		}
		if !bytes.Equal(db, stream[:len(stream)-sha256.Size]) || r.DatabaseSize() != int64(len(db)) {
			t.Fatalf("got %d database bytes (DatabaseSize %d), want %d", len(db), r.DatabaseSize(), len(stream)-sha256.Size)
		}
		assertEtcdDatabase(t, db)
	})

	t.Run("keep trailer passes the stream through unchanged", func(t *testing.T) {
		got, err := io.ReadAll(NewFullSnapshotReader(bytes.NewReader(stream), snap.SnapName, true))
		if err != nil {
			t.Fatalf("reading: %v", err)
		}
		if !bytes.Equal(got, stream) {
			t.Fatal("pass-through changed the stream")
		}
	})

	t.Run("reads of any size, served in place or through the reader's buffer", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, keep := range []bool{false, true} {
			want := stream
			if !keep {
				want = stream[:len(stream)-sha256.Size]
			}
			// The source returns pieces of random size; the consumer asks for random sizes, from a
			// single byte to more than the held-back window.
			r := NewFullSnapshotReader(iotest.HalfReader(bytes.NewReader(stream)), snap.SnapName, keep)
			var got []byte
			for {
				buf := make([]byte, 1+rng.IntN(3*sha256.Size+9000*rng.IntN(2)))
				n, err := r.Read(buf)
				got = append(got, buf[:n]...)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("keepTrailer %v: %v", keep, err)
				}
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("keepTrailer %v: got %d bytes, want %d", keep, len(got), len(want))
			}
		}
	})

	t.Run("compressed object through OpenFull", func(t *testing.T) {
		gzSnap := snapshot.NewFull(10, time.Now(), snapshot.CompressionZlib, false)
		var stored bytes.Buffer
		zw, _ := snapshot.NewCompressor(&stored, snapshot.CompressionZlib)
		_, _ = zw.Write(stream)
		_ = zw.Close()
		rc, err := OpenFull(&stored, gzSnap, false)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		db, err := io.ReadAll(rc)
		if err != nil {
			t.Fatalf("reading: %v", err)
		}
		assertEtcdDatabase(t, db)
	})

	t.Run("flipped byte anywhere is rejected", func(t *testing.T) {
		for _, pos := range []int{0, 4096, len(stream) / 2, len(stream) - sha256.Size - 1, len(stream) - sha256.Size, len(stream) - 1} {
			corrupted := bytes.Clone(stream)
			corrupted[pos] ^= 0x80
			_, err := VerifyFullSnapshot(bytes.NewReader(corrupted), snap.SnapName)
			if !errors.Is(err, ErrChecksumMismatch) || !strings.Contains(err.Error(), snap.SnapName) {
				t.Fatalf("flipped byte %d of %d: err = %v, want ErrChecksumMismatch naming %s", pos, len(stream), err, snap.SnapName)
			}
		}
		size, err := VerifyFullSnapshot(bytes.NewReader(stream), snap.SnapName)
		if err != nil || size != int64(len(stream)-sha256.Size) {
			t.Fatalf("clean stream: size %d, err %v", size, err)
		}
	})

	t.Run("truncation is rejected", func(t *testing.T) {
		for _, n := range []int{0, sha256.Size - 1, len(stream) - 1} {
			_, err := VerifyFullSnapshot(bytes.NewReader(stream[:n]), snap.SnapName)
			if err == nil {
				t.Fatalf("truncated to %d bytes: want an error", n)
			}
			if n < sha256.Size && !errors.Is(err, ErrTruncated) {
				t.Fatalf("truncated to %d bytes: err = %v, want ErrTruncated", n, err)
			}
		}
	})

	t.Run("source errors are passed on with the name", func(t *testing.T) {
		boom := errors.New("connection reset")
		_, err := VerifyFullSnapshot(io.MultiReader(bytes.NewReader(stream[:1000]), iotest.ErrReader(boom)), snap.SnapName)
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), snap.SnapName) {
			t.Fatalf("err = %v, want the source error naming %s", err, snap.SnapName)
		}
	})
}

// assertEtcdDatabase opens db with bbolt and checks it holds etcd's key bucket with data.
func assertEtcdDatabase(t *testing.T, db []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
	if err := os.WriteFile(path, db, 0o600); err != nil {
		t.Fatal(err)
	}
	bdb, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("restored bytes are not a bbolt database: %v", err)
	}
	defer bdb.Close()
	err = bdb.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("key"))
		if b == nil {
			return errors.New("no etcd key bucket")
		}
		if n := b.Stats().KeyN; n < 5 {
			return errors.New("key bucket holds fewer revisions than the workload wrote")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
