package backuptest

import (
	"bytes"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// Every provider's store saves and fetches through the shared constructors, and FlipByte corrupts and
// repairs a snapshot on each of them.
func TestAllProvidersFlipByte(t *testing.T) {
	for i, open := range AllProviders {
		t.Run(strconv.Itoa(i), func(t *testing.T) { // a provider that cannot run here skips only its subtest
			store := open(t)
			t.Log("provider", store.Name)
			snap := snapshot.NewIncr(1, 9, time.Unix(1700000000, 0), snapshot.CompressionNone)
			data := []byte("0123456789")
			if err := store.Save(t.Context(), snap, bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
			FlipMiddleByte(t, store, snap)
			if got := fetchAll(t, store, snap); bytes.Equal(got, data) || len(got) != len(data) || got[5] != data[5]^0xff {
				t.Fatalf("after FlipMiddleByte: %q", got)
			}
			FlipByte(t, store, snap, 5)
			if got := fetchAll(t, store, snap); !bytes.Equal(got, data) {
				t.Fatalf("after flipping back: %q", got)
			}
		})
	}
}

func fetchAll(t *testing.T, store *Store, snap *snapshot.Snapshot) []byte {
	t.Helper()
	r, err := store.Fetch(t.Context(), snap)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
