package snapshotter

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/boltstream"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotformat"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// TestOpenSnapshotStreamsTheDatabaseIntact reads a database of many messages through openSnapshot: the
// stream's own sha256 trailer must match (any byte lost, reordered or reused by the codec breaks it),
// and it is etcd's database at the current revision. (Two snapshots are not byte-identical: etcd
// commits in the background, so the meta pages differ.)
func TestOpenSnapshotStreamsTheDatabaseIntact(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	value := strings.Repeat("0123456789abcdef", 8<<10) // 128 KiB: overflow pages and many messages
	var rev int64
	for i := range 40 {
		resp, err := cli.Put(t.Context(), fmt.Sprintf("k%02d", i), value+fmt.Sprint(i))
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	r, err := openSnapshot(t.Context(), cli)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	size, err := snapshotformat.VerifyFullSnapshot(bytes.NewReader(stream), "test")
	if err != nil {
		t.Fatal(err)
	}
	if size < 4<<20 {
		t.Fatalf("database of %d bytes, want more than 4 MiB", size)
	}
	scanner := boltstream.NewScanner()
	_, _ = scanner.Write(stream)
	if got, err := scanner.Revision(); err != nil || got != rev {
		t.Fatalf("revision %d (%v), want %d", got, err, rev)
	}
}
