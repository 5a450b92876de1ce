package copier_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/copier"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/restorer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

const day = 24 * time.Hour

// history backs up four generations of a cluster into a Local store: full snapshots taken 10, 3 and 1
// days ago and now, each followed by two deltas; the clock ends at now.
type history struct {
	source *backuptest.Store
	snap   *snapshotter.Snapshotter
	etcd   *etcdserver.Member
	clock  *backuptest.Clock
	now    time.Time
	fulls  []*snapshot.Snapshot
}

func newHistory(t *testing.T) *history {
	t.Helper()
	h := &history{source: backuptest.Local(t), etcd: etcdserver.Start(t).Members[0], now: time.Now().Truncate(time.Second)}
	cli := h.etcd.Client(t)
	h.clock = backuptest.NewClock(h.now.Add(-10 * day))
	h.snap = backuptest.Backup(t, cli, h.source.SnapStore, h.clock, snapshot.CompressionGzip)
	round := 0
	for i, age := range []time.Duration{10 * day, 3 * day, day, 0} {
		h.clock.Set(h.now.Add(-age))
		if i > 0 {
			h.fulls = append(h.fulls, backuptest.TakeFull(t, h.snap, false))
		}
		for range 2 {
			backuptest.Churn(t, cli, round)
			round++
			h.clock.Set(h.clock.Now().Add(time.Minute))
			backuptest.TakeDelta(t, h.snap)
		}
	}
	return h
}

func names(snaps []*snapshot.Snapshot) []string {
	var out []string
	for _, s := range snaps {
		out = append(out, s.SnapName)
	}
	return out
}

// TestCopyLocalToS3 copies the newest two full snapshots younger than 5 days with their deltas from a
// Local store to S3, restores from the target and compares with the source cluster, and copies again to
// show the copy is idempotent.
func TestCopyLocalToS3(t *testing.T) {
	h := newHistory(t)
	target := backuptest.S3(t)
	opts := copier.Options{Source: h.source.SnapStore, Target: target.SnapStore, MaxBackups: 2, MaxBackupAge: 5,
		Log: testr.New(t), Now: func() time.Time { return h.now }}
	res, err := copier.Copy(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	srcList, err := h.source.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	oldest := h.fulls[len(h.fulls)-2] // taken a day ago
	for _, s := range srcList {
		if (s.Kind == snapshot.KindFull && s.LastRevision >= oldest.LastRevision) || (s.Kind == snapshot.KindIncr && s.LastRevision > oldest.LastRevision) {
			want = append(want, s.SnapName)
		}
	}
	gotList, err := target.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := names(gotList); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("target holds\n  %v\nwant\n  %v", got, want)
	}
	if len(res.Copied) != len(want) || len(res.Skipped) != 0 {
		t.Fatalf("copied %d, skipped %d; want %d copied", len(res.Copied), len(res.Skipped), len(want))
	}

	// The target restores exactly what the source cluster holds.
	wantState := backuptest.StateAt(t, h.etcd.Client(t), 0)
	dataDir := filepath.Join(t.TempDir(), "restored")
	peer := etcdserver.FreeURL(t)
	if _, err := restorer.Restore(t.Context(), restorer.Options{Store: target.SnapStore, DataDir: dataDir, Name: "m0", ClusterToken: "t",
		InitialCluster: "m0=" + peer.String(), InitialAdvertisePeerURLs: []string{peer.String()}, Log: testr.New(t)}); err != nil {
		t.Fatal(err)
	}
	m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "m0", DataDir: dataDir, PeerURL: peer})
	if diff := backuptest.Diff(wantState, backuptest.StateAt(t, m.Client(t), 0)); len(diff) > 0 {
		t.Fatalf("restore from the copy differs from the source cluster:\n%v", diff)
	}

	again, err := copier.Copy(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Copied) != 0 || len(again.Skipped) != len(want) {
		t.Fatalf("second copy: copied %v, skipped %d; want nothing copied, %d skipped", names(again.Copied), len(again.Skipped), len(want))
	}
}

// TestCopyRejectsCorruptedObject flips a byte of a delta in the source: the copy fails naming the
// object, and the target holds neither it nor any partial object.
func TestCopyRejectsCorruptedObject(t *testing.T) {
	h := newHistory(t)
	list, err := h.source.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	victim := list[len(list)-1]
	if victim.Kind != snapshot.KindIncr {
		t.Fatalf("expected the newest object to be a delta, got %s", victim)
	}
	backuptest.FlipByte(t, h.source, victim, 40)
	target := backuptest.S3(t)
	_, err = copier.Copy(t.Context(), copier.Options{Source: h.source.SnapStore, Target: target.SnapStore, MaxBackups: 1, MaxBackupAge: -1, Log: testr.New(t)})
	if err == nil || !strings.Contains(err.Error(), victim.SnapName) {
		t.Fatalf("Copy = %v, want an error naming %s", err, victim.SnapName)
	}
	got, err := target.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		if s.SnapName == victim.SnapName {
			t.Fatalf("corrupted %s was copied", victim.SnapName)
		}
	}
}

// TestCopyWaitsForFinalSnapshot starts a copy that waits for the final snapshot, then shuts the source
// down with a final full snapshot: the copy completes and includes it.
func TestCopyWaitsForFinalSnapshot(t *testing.T) {
	h := newHistory(t)
	target := backuptest.Local(t)
	polled := make(chan struct{}, 1)
	source := &listSpy{SnapStore: h.source.SnapStore, listed: polled}
	done := make(chan error, 1)
	var res copier.Result
	go func() {
		var err error
		res, err = copier.Copy(t.Context(), copier.Options{Source: source, Target: target.SnapStore, MaxBackups: 1, MaxBackupAge: -1,
			WaitForFinalSnapshot: true, WaitForFinalSnapshotTimeout: time.Minute, PollInterval: 20 * time.Millisecond, Log: testr.New(t)})
		done <- err
	}()
	<-polled // the copy saw the source without a final snapshot
	select {
	case err := <-done:
		t.Fatalf("copy finished before the final snapshot: %v", err)
	default:
	}
	backuptest.Churn(t, h.etcd.Client(t), 100)
	final := backuptest.TakeFull(t, h.snap, true)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(res.Copied) != 1 || res.Copied[0].SnapName != final.SnapName || !strings.HasSuffix(final.SnapName, snapshot.FinalSuffix) {
		t.Fatalf("copied %v, want the final snapshot %s", names(res.Copied), final.SnapName)
	}
}

// TestCopyFinalSnapshotTimeout: without a final snapshot the copy gives up after the timeout with an
// error naming the latest full snapshot, and copies nothing.
func TestCopyFinalSnapshotTimeout(t *testing.T) {
	h := newHistory(t)
	target := backuptest.Local(t)
	_, err := copier.Copy(t.Context(), copier.Options{Source: h.source.SnapStore, Target: target.SnapStore, MaxBackupAge: -1,
		WaitForFinalSnapshot: true, WaitForFinalSnapshotTimeout: 300 * time.Millisecond, PollInterval: 20 * time.Millisecond, Log: testr.New(t)})
	if !errors.Is(err, copier.ErrFinalSnapshotTimeout) || !strings.Contains(err.Error(), h.fulls[len(h.fulls)-1].SnapName) {
		t.Fatalf("Copy = %v, want %v naming %s", err, copier.ErrFinalSnapshotTimeout, h.fulls[len(h.fulls)-1].SnapName)
	}
	if got, _ := target.List(t.Context()); len(got) != 0 {
		t.Fatalf("copied %v despite the timeout", names(got))
	}
}

// listSpy signals every listing of the source.
type listSpy struct {
	snapstore.SnapStore
	listed chan struct{}
}

func (l *listSpy) List(ctx context.Context) ([]*snapshot.Snapshot, error) {
	snaps, err := l.SnapStore.List(ctx)
	select {
	case l.listed <- struct{}{}:
	default:
	}
	return snaps, err
}

// TestCopyIgnoresAFinalSnapshotFollowedByWrites: a final full snapshot after which the source backed up
// more writes (an early or stray `final=true` while the cluster still serves) does not release the copy;
// it times out instead of copying a history that misses those writes.
func TestCopyIgnoresAFinalSnapshotFollowedByWrites(t *testing.T) {
	h := newHistory(t)
	target := backuptest.Local(t)
	early := backuptest.TakeFull(t, h.snap, true)
	backuptest.Churn(t, h.etcd.Client(t), 100)
	backuptest.TakeDelta(t, h.snap)

	_, err := copier.Copy(t.Context(), copier.Options{Source: h.source.SnapStore, Target: target.SnapStore, MaxBackups: 1, MaxBackupAge: -1,
		WaitForFinalSnapshot: true, WaitForFinalSnapshotTimeout: 300 * time.Millisecond, PollInterval: 20 * time.Millisecond, Log: testr.New(t)})
	if !errors.Is(err, copier.ErrFinalSnapshotTimeout) || !strings.Contains(err.Error(), early.SnapName) {
		t.Fatalf("Copy = %v, want %v naming %s", err, copier.ErrFinalSnapshotTimeout, early.SnapName)
	}
	if got, _ := target.List(t.Context()); len(got) != 0 {
		t.Fatalf("copied %v although the final snapshot was followed by writes", names(got))
	}
}

// TestCopyAcceptsAFinalSnapshotFollowedByAFullAtItsRevision: the full snapshot schedule fired after the final
// snapshot and before the shutdown; that snapshot holds nothing more, so the copy goes ahead.
func TestCopyAcceptsAFinalSnapshotFollowedByAFullAtItsRevision(t *testing.T) {
	h := newHistory(t)
	target := backuptest.Local(t)
	final := backuptest.TakeFull(t, h.snap, true)
	time.Sleep(time.Until(final.CreatedOn.Add(time.Second))) // a name of its own: names carry the second
	scheduled := backuptest.TakeFull(t, h.snap, false)
	if scheduled.LastRevision != final.LastRevision || scheduled.IsFinal {
		t.Fatalf("scheduled snapshot %s, want a non-final one at revision %d", scheduled.SnapName, final.LastRevision)
	}

	res, err := copier.Copy(t.Context(), copier.Options{Source: h.source.SnapStore, Target: target.SnapStore, MaxBackupAge: -1,
		WaitForFinalSnapshot: true, WaitForFinalSnapshotTimeout: 5 * time.Second, PollInterval: 20 * time.Millisecond, Log: testr.New(t)})
	if err != nil {
		t.Fatalf("Copy = %v, want the copy of a source whose last full snapshot repeats the final one", err)
	}
	if !slices.ContainsFunc(res.Copied, func(s *snapshot.Snapshot) bool { return s.SnapName == final.SnapName }) {
		t.Fatalf("copied %v, want the final snapshot %s among them", names(res.Copied), final.SnapName)
	}
}

// TestCopyFailsWhenTheSourceIsWrittenDuringTheCopy: writes backed up after the final snapshot while the copy
// runs make the copy fail with ErrWrittenAfterFinal, naming the later snapshot, instead of succeeding with a
// target that misses them.
func TestCopyFailsWhenTheSourceIsWrittenDuringTheCopy(t *testing.T) {
	h := newHistory(t)
	target := backuptest.Local(t)
	backuptest.TakeFull(t, h.snap, true)
	var later *snapshot.Snapshot
	writer := &saveHook{SnapStore: target.SnapStore, before: func() {
		backuptest.Churn(t, h.etcd.Client(t), 200)
		later = backuptest.TakeDelta(t, h.snap)
	}}
	_, err := copier.Copy(t.Context(), copier.Options{Source: h.source.SnapStore, Target: writer, MaxBackups: 1, MaxBackupAge: -1,
		WaitForFinalSnapshot: true, WaitForFinalSnapshotTimeout: time.Minute, PollInterval: 20 * time.Millisecond, Log: testr.New(t)})
	if !errors.Is(err, copier.ErrWrittenAfterFinal) || later == nil || !strings.Contains(err.Error(), later.SnapName) {
		t.Fatalf("Copy = %v, want %v naming the later delta", err, copier.ErrWrittenAfterFinal)
	}
}

// saveHook runs before once, before the first upload to the wrapped store.
type saveHook struct {
	snapstore.SnapStore
	before func()
	once   sync.Once
}

func (s *saveHook) Save(ctx context.Context, snap *snapshot.Snapshot, r io.Reader) error {
	s.once.Do(s.before)
	return s.SnapStore.Save(ctx, snap, r)
}

// TestCopyDropsTheFinalSuffix: a final full snapshot lands in the target under its name without ".final",
// as upstream etcd-backup-restore's copy writes it (copier.go: snapshot.SetFinal(false) before Save): the
// target is a new cluster's store, whose own shutdown is what may mark a snapshot final there. A second
// copy skips it, and so does a copy into a target that holds it with ".final" (what this copier wrote
// before), so that no snapshot is duplicated.
func TestCopyDropsTheFinalSuffix(t *testing.T) {
	h := newHistory(t)
	backuptest.Churn(t, h.etcd.Client(t), 100)
	final := backuptest.TakeFull(t, h.snap, true)
	want := strings.TrimSuffix(final.SnapName, snapshot.FinalSuffix)
	if want == final.SnapName {
		t.Fatalf("source snapshot %s is not final", final.SnapName)
	}
	for _, preset := range []string{"", final.SnapName} {
		t.Run("target holding "+preset, func(t *testing.T) {
			target := backuptest.Local(t)
			if preset != "" {
				rc, err := h.source.Fetch(t.Context(), final)
				if err != nil {
					t.Fatal(err)
				}
				err = target.Save(t.Context(), final, rc)
				rc.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			opts := copier.Options{Source: h.source.SnapStore, Target: target.SnapStore, MaxBackups: 1, MaxBackupAge: -1, Log: testr.New(t)}
			res, err := copier.Copy(t.Context(), opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := target.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if preset != "" {
				if len(res.Copied) != 0 || len(got) != 1 || got[0].SnapName != preset {
					t.Fatalf("copied %v into a target holding %s; target now %v, want nothing copied", names(res.Copied), preset, names(got))
				}
				return
			}
			if len(got) != 1 || got[0].SnapName != want || got[0].IsFinal {
				t.Fatalf("target holds %v, want only %s (not final)", names(got), want)
			}
			again, err := copier.Copy(t.Context(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Copied) != 0 || len(again.Skipped) != 1 {
				t.Fatalf("second copy: copied %v, skipped %d; want the snapshot skipped", names(again.Copied), len(again.Skipped))
			}
		})
	}
}
