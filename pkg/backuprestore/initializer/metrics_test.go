package initializer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/server/v3/storage/schema"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/metricstest"
	"github.com/gardener-etcd/gardener-etcd/test/support/oldetcd"
)

// expectObservations fails unless the histogram name exports wantSeries series (all of them from the start,
// as upstream) and each series of want (a key that labels turns into the series' labels) has its number of
// observations.
func expectObservations(t *testing.T, reg *prometheus.Registry, name string, wantSeries int, want map[string]uint64, labels func(string) map[string]string) {
	t.Helper()
	if got, err := testutil.GatherAndCount(reg, name); err != nil || got != wantSeries {
		t.Fatalf("%s exports %d series (%v), want %d", name, got, err, wantSeries)
	}
	for series, count := range want {
		if got := metricstest.Count(t, reg, name, labels(series)); got != count {
			t.Errorf("%s{%s} = %d observations, want %d", name, series, got, count)
		}
	}
}

func succeeded(v string) map[string]string { return map[string]string{"succeeded": v} }

// restore splits "single_node/true" into the restoration histogram's labels.
func restore(series string) map[string]string {
	kind, ok, _ := strings.Cut(series, "/")
	return map[string]string{"restore": kind, "succeeded": ok}
}

// A one-member cluster validates its data directory on every initialization and restores as a single
// node when its data is gone: etcdbr_validation_duration_seconds{succeeded} and
// etcdbr_restoration_duration_seconds{restore,succeeded} count them, the latter under
// restore="single_node".
func TestValidationAndSingleNodeRestorationAreObserved(t *testing.T) {
	h := newHarness(t, 1)
	store := backuptest.Local(t)
	h.store = store.SnapStore
	reg := prometheus.NewPedanticRegistry()
	h.metrics = NewMetrics(reg)
	h.initialize(0, CaseBootstrapFirst)
	h.start(0)
	cli := h.nodes[0].etcd.Client(t)
	s := startSnapshotter(t, cli, store)
	putN(t, cli, "k/", 20)
	takeDelta(t, s)
	s.Stop()
	h.stop(0)
	if err := os.RemoveAll(h.nodes[0].dataDir); err != nil {
		t.Fatal(err)
	}

	h.initialize(0, CaseNonQuorateFirstRestore)
	expectObservations(t, reg, "etcdbr_validation_duration_seconds", 2, map[string]uint64{"true": 2, "false": 0}, succeeded)
	expectObservations(t, reg, "etcdbr_restoration_duration_seconds", 4,
		map[string]uint64{"single_node/true": 1, "single_node/false": 0, "single_member/true": 0, "single_member/false": 0}, restore)
}

// The first member of a three-member cluster that lost every data directory restores from the store as a
// cluster of its own (case 7): as upstream, that is restore="single_node" too.
func TestFirstMemberRestoreIsASingleNodeRestoration(t *testing.T) {
	h := newHarness(t, 3)
	h.bootstrap()
	store := backuptest.Local(t)
	h.store = store.SnapStore
	cli := h.nodes[0].etcd.Client(t)
	s := startSnapshotter(t, cli, store)
	putN(t, cli, "k/", 20)
	takeDelta(t, s)
	s.Stop()
	h.stop(0, 1, 2)
	for _, nd := range h.nodes {
		if err := os.RemoveAll(nd.dataDir); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewPedanticRegistry()
	h.metrics = NewMetrics(reg)

	h.initialize(0, CaseNonQuorateFirstRestore)
	expectObservations(t, reg, "etcdbr_restoration_duration_seconds", 4,
		map[string]uint64{"single_node/true": 1, "single_member/true": 0}, restore)
}

// A member whose data directory was wiped rejoins as a learner (case 5): the upstream sidecar's restoration
// of a single member (restore="single_member"); the addition is also timed in
// etcdbr_add_learner_duration_seconds and counted in etcdbr_is_learner_count_total, both by outcome.
func TestLearnerAdditionIsObserved(t *testing.T) {
	h := newHarness(t, 3)
	h.bootstrap()
	h.stop(2)
	if err := os.RemoveAll(h.nodes[2].dataDir); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	h.metrics = NewMetrics(reg)
	if got := metricstest.Value(t, reg, "etcdbr_is_learner_count_total", succeeded("true")); got != 0 {
		t.Fatalf("etcdbr_is_learner_count_total{succeeded=true} = %v before any addition", got)
	}

	h.initialize(2, CaseQuorateInvalidMetadata)
	expectObservations(t, reg, "etcdbr_add_learner_duration_seconds", 2, map[string]uint64{"true": 1, "false": 0}, succeeded)
	expectObservations(t, reg, "etcdbr_restoration_duration_seconds", 4,
		map[string]uint64{"single_member/true": 1, "single_member/false": 0, "single_node/true": 0}, restore)
	for outcome, want := range map[string]float64{"true": 1, "false": 0} {
		if got := metricstest.Value(t, reg, "etcdbr_is_learner_count_total", succeeded(outcome)); got != want {
			t.Errorf("etcdbr_is_learner_count_total{succeeded=%s} = %v, want %v", outcome, got, want)
		}
	}
}

// A data directory an etcd still runs on is not validated: as upstream, a held lock fails the validation.
func TestDataDirInUseIsAFailedValidation(t *testing.T) {
	h := newHarness(t, 1)
	h.initialize(0, CaseBootstrapFirst)
	h.start(0)
	reg := prometheus.NewPedanticRegistry()
	in := h.initializer(0, func(o *Options) { o.Metrics = NewMetrics(reg) })
	if err := in.Initialize(t.Context(), podwire.InitFull); !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("Initialize on a running member = %v, want %v", err, ErrDataDirInUse)
	}
	expectObservations(t, reg, "etcdbr_validation_duration_seconds", 2, map[string]uint64{"true": 0, "false": 1}, succeeded)
}

// Data that this etcd cannot open is refused before anything else: a validation that did not succeed.
func TestRefusedDataIsAFailedValidation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd in a child process")
	}
	// Data of a newer etcd (storage version 3.8): no older etcd steps it, the sidecar refuses it.
	ours := etcdserver.StartProcess(t, etcdserver.ProcessConfig{Name: "etcd-test-0", DataDir: filepath.Join(t.TempDir(), "data")})
	ours.Kill()
	db, err := bolt.Open(dbPath(ours.Config.DataDir), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(schema.Meta.Name()).Put(schema.MetaStorageVersionName, []byte("3.8.0"))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	m := oldetcd.Member{Name: ours.Config.Name, DataDir: ours.Config.DataDir, ClientURL: ours.Config.ClientURL, PeerURL: ours.Config.PeerURL}
	reg := prometheus.NewPedanticRegistry()
	in := oldDataInitializer(t, m, 1)
	in.opts.Metrics = NewMetrics(reg)
	if err := in.Initialize(t.Context(), podwire.InitSanity); !errors.Is(err, etcddata.ErrDataVersion) {
		t.Fatalf("Initialize = %v, want ErrDataVersion for data of a newer etcd", err)
	}
	expectObservations(t, reg, "etcdbr_validation_duration_seconds", 2, map[string]uint64{"true": 0, "false": 1}, succeeded)
}
