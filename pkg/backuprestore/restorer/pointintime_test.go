package restorer_test

import (
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/restorer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// history is a backed-up source: two full snapshots and three deltas of a real etcd, named by a clock
// an hour apart, with revisions recorded along the way.
type history struct {
	src                *etcdserver.Member
	store              *backuptest.Store
	full1, full2       *snapshot.Snapshot
	d1, d2, d3         *snapshot.Snapshot
	insideD1           int64 // a revision strictly inside d1
	t0, t1, t2, t3, t4 time.Time
}

// backUpHistory writes: round 0, full1 (t0); rounds 1 and 2, d1 (t1) — insideD1 is the revision after
// round 1; round 3, d2 (t2); full2 (t3) at d2's revision; round 4, d3 (t4).
func backUpHistory(t *testing.T, store *backuptest.Store) history {
	t.Helper()
	h := history{src: etcdserver.Start(t).Members[0], store: store}
	cli := h.src.Client(t)
	h.t0 = time.Unix(1_800_000_000, 0).UTC()
	h.t1, h.t2, h.t3, h.t4 = h.t0.Add(time.Hour), h.t0.Add(2*time.Hour), h.t0.Add(3*time.Hour), h.t0.Add(4*time.Hour)
	clock := backuptest.NewClock(h.t0)
	backuptest.Churn(t, cli, 0)
	s := backuptest.Backup(t, cli, store.SnapStore, clock, snapshot.CompressionGzip)
	list, err := store.List(t.Context())
	if err != nil || len(list) != 1 {
		t.Fatalf("after the initial full snapshot the store lists %v, %v", list, err)
	}
	h.full1 = list[0]
	h.insideD1 = backuptest.Churn(t, cli, 1)
	backuptest.Churn(t, cli, 2)
	clock.Set(h.t1)
	h.d1 = backuptest.TakeDelta(t, s)
	backuptest.Churn(t, cli, 3)
	clock.Set(h.t2)
	h.d2 = backuptest.TakeDelta(t, s)
	clock.Set(h.t3)
	h.full2 = backuptest.TakeFull(t, s, false)
	backuptest.Churn(t, cli, 4)
	clock.Set(h.t4)
	h.d3 = backuptest.TakeDelta(t, s)
	s.Stop()
	if h.insideD1 <= h.d1.StartRevision || h.insideD1 >= h.d1.LastRevision || h.full2.LastRevision != h.d2.LastRevision {
		t.Fatalf("unexpected history: full1 %s, d1 %s (inside %d), d2 %s, full2 %s, d3 %s", h.full1, h.d1, h.insideD1, h.d2, h.full2, h.d3)
	}
	return h
}

// d3Size is the stored size of d3.
func (h history) d3Size(t *testing.T) int64 {
	t.Helper()
	r, err := h.store.Fetch(t.Context(), h.d3)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, err := io.Copy(io.Discard, r)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// fingerprint is every stored object's key and the digest of its stored bytes.
func fingerprint(t *testing.T, store snapstore.SnapStore) map[string][sha256.Size]byte {
	t.Helper()
	list, err := store.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][sha256.Size]byte{}
	for _, snap := range list {
		r, err := store.Fetch(t.Context(), snap)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		_, err = io.Copy(h, r)
		_ = r.Close()
		if err != nil {
			t.Fatalf("reading %s: %v", snap, err)
		}
		out[snap.RelativeKey()] = [sha256.Size]byte(h.Sum(nil))
	}
	return out
}

func sameFingerprint(t *testing.T, want, got map[string][sha256.Size]byte) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("the store holds %d objects after the restore, %d before", len(got), len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Fatalf("object %s changed or vanished during the restore", k)
		}
	}
}

// TestRestoreToRevision restores a real etcd's backups to chosen revisions — a full snapshot's, one inside a
// delta, a delta's last, one after a newer full snapshot — and to chosen times; a real etcd started on each
// restored directory must hold exactly the source's keys at that revision and be at that revision. The
// store's objects are byte-identical after every restore.
func TestRestoreToRevision(t *testing.T) {
	h := backUpHistory(t, backuptest.Local(t))
	src := h.src.Client(t)
	before := fingerprint(t, h.store)
	for _, tc := range []struct {
		name     string
		revision int64
		time     time.Time
		want     int64
		full     *snapshot.Snapshot
		deltas   int
	}{
		{name: "full snapshot only", revision: h.full1.LastRevision, want: h.full1.LastRevision, full: h.full1},
		{name: "inside a delta", revision: h.insideD1, want: h.insideD1, full: h.full1, deltas: 1},
		{name: "a delta's end", revision: h.d1.LastRevision, want: h.d1.LastRevision, full: h.full1, deltas: 1},
		{name: "inside a delta after the newer full snapshot", revision: h.d3.LastRevision - 2, want: h.d3.LastRevision - 2, full: h.full2, deltas: 1},
		{name: "time of the first full snapshot", time: h.t0, want: h.full1.LastRevision, full: h.full1},
		{name: "time between two deltas", time: h.t1.Add(30 * time.Minute), want: h.d1.LastRevision, full: h.full1, deltas: 1},
		{name: "time after the last delta", time: h.t4.Add(time.Hour), want: h.d3.LastRevision, full: h.full2, deltas: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := backuptest.StateAt(t, src, tc.want) // the live source at that revision (never compacted)
			dataDir := filepath.Join(t.TempDir(), "m0")
			opts := restoreOptions(h.store, dataDir, t)
			opts.TargetRevision, opts.TargetTime = tc.revision, tc.time
			res, err := restorer.Restore(t.Context(), opts)
			if err != nil {
				t.Fatalf("Restore: %v", err)
			}
			if res.Revision != tc.want || res.Full.SnapName != tc.full.SnapName || len(res.Deltas) != tc.deltas {
				t.Fatalf("result %+v: want revision %d from %s and %d deltas", res, tc.want, tc.full, tc.deltas)
			}
			sameFingerprint(t, before, fingerprint(t, h.store))
			m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "m0", DataDir: dataDir,
				PeerURL: mustURL(t, opts.InitialAdvertisePeerURLs[0]), InitialCluster: opts.InitialCluster})
			if diff := backuptest.Diff(want, backuptest.StateAt(t, m.Client(t), 0)); len(diff) > 0 {
				t.Fatalf("restored etcd differs from the source at revision %d:\n%s", tc.want, strings.Join(diff, "\n"))
			}
		})
	}
}

// TestRestoreToRevisionRefusals: a target the store cannot restore exactly is refused, naming the
// revisions, before anything is written; the store is untouched. A corrupted delta spanning the target
// fails the restore even when the corruption lies after the target.
func TestRestoreToRevisionRefusals(t *testing.T) {
	h := backUpHistory(t, backuptest.Local(t))
	// The same backups without d2: its revisions are a gap of the delta chain (full2 is at its end).
	gapped := backuptest.Local(t)
	for _, snap := range []*snapshot.Snapshot{h.full1, h.d1, h.full2, h.d3} {
		r, err := h.store.Fetch(t.Context(), snap)
		if err != nil {
			t.Fatal(err)
		}
		err = gapped.Save(t.Context(), snap, r)
		_ = r.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	rev := func(r int64) string { return strconv.FormatInt(r, 10) }
	for _, tc := range []struct {
		name     string
		store    *backuptest.Store
		revision int64
		time     time.Time
		is       error
		mentions []string
	}{
		{name: "older than the oldest full snapshot", store: h.store, revision: 1, is: restorer.ErrTargetNotInStore,
			mentions: []string{"revision 1", "older than the oldest full snapshot", h.full1.SnapName}},
		{name: "newer than the newest stored revision", store: h.store, revision: h.d3.LastRevision + 1, is: restorer.ErrTargetNotInStore,
			mentions: []string{"revision " + rev(h.d3.LastRevision+1), "newest stored revision " + rev(h.d3.LastRevision)}},
		{name: "in a gap of the delta chain", store: gapped, revision: h.d2.StartRevision + 1, is: snapshot.ErrRevisionGap,
			mentions: []string{"revision " + rev(h.d2.StartRevision+1), "revisions " + rev(h.d2.StartRevision) + " to " + rev(h.d2.LastRevision-1), h.full2.SnapName}},
		{name: "time before the oldest snapshot", store: h.store, time: h.t0.Add(-time.Second), is: restorer.ErrTargetNotInStore,
			mentions: []string{h.t0.Add(-time.Second).Format(time.RFC3339), h.full1.SnapName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fingerprint(t, tc.store)
			parent := t.TempDir()
			opts := restoreOptions(tc.store, filepath.Join(parent, "m0"), t)
			opts.TargetRevision, opts.TargetTime = tc.revision, tc.time
			_, err := restorer.Restore(t.Context(), opts)
			if !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Fatalf("err = %v, want it to mention %q", err, m)
				}
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Fatalf("a refused restore wrote %v", entries)
			}
			sameFingerprint(t, before, fingerprint(t, tc.store))
		})
	}
	t.Run("corruption after the target in the delta spanning it", func(t *testing.T) {
		// The checksum covers the whole delta: events up to the target are trusted only once it matched.
		backuptest.FlipByte(t, h.store, h.d3, h.d3Size(t)-10)
		parent := t.TempDir()
		opts := restoreOptions(h.store, filepath.Join(parent, "m0"), t)
		opts.TargetRevision = h.d3.StartRevision
		if _, err := restorer.Restore(t.Context(), opts); err == nil || !strings.Contains(err.Error(), h.d3.SnapName) {
			t.Fatalf("err = %v, want an error naming the corrupted %s", err, h.d3)
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 0 {
			t.Fatalf("a failed restore left %v", entries)
		}
		backuptest.FlipByte(t, h.store, h.d3, h.d3Size(t)-10) // repaired: the failure was the corruption's
		opts.DataDir = filepath.Join(parent, "m1")
		if _, err := restorer.Restore(t.Context(), opts); err != nil {
			t.Fatalf("restore after the repair: %v", err)
		}
	})
	t.Run("revision and time together", func(t *testing.T) {
		opts := restoreOptions(h.store, filepath.Join(t.TempDir(), "m0"), t)
		opts.TargetRevision, opts.TargetTime = h.d1.LastRevision, h.t1
		if _, err := restorer.Restore(t.Context(), opts); err == nil || !strings.Contains(err.Error(), "TargetRevision") {
			t.Fatalf("err = %v, want a refusal naming TargetRevision and TargetTime", err)
		}
	})
}
