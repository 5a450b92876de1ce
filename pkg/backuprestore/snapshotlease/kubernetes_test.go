package snapshotlease

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Main(m, &env) }

func TestUpdateRenewsLeasesByName(t *testing.T) {
	ctx := t.Context()
	ns := env.CreateNamespace(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	for _, name := range []string{"etcd-main-full-snapshot", "etcd-main-delta-snapshot"} {
		if _, err := cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	k := &Kubernetes{Client: cs, Namespace: ns, FullName: "etcd-main-full-snapshot", DeltaName: "etcd-main-delta-snapshot", Now: func() time.Time { return now }}

	holder := func(name string) (string, time.Time) {
		t.Helper()
		l, err := cs.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if l.Spec.HolderIdentity == nil || l.Spec.RenewTime == nil {
			return "", time.Time{}
		}
		return *l.Spec.HolderIdentity, l.Spec.RenewTime.UTC()
	}
	snapName := func(name string) string {
		t.Helper()
		l, err := cs.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l.Annotations["snapshot.etcd.gardener.cloud/name"]
	}

	if err := k.Update(ctx, snapshot.KindIncr, 41, "Incr-00000001-00000041-1893553445.gz"); err != nil {
		t.Fatal(err)
	}
	if h, _ := holder("etcd-main-full-snapshot"); h != "" {
		t.Fatalf("a delta renewed the full snapshot lease: %q", h)
	}
	if h, at := holder("etcd-main-delta-snapshot"); h != "41" || !at.Equal(now) {
		t.Fatalf("delta lease = %q at %s, want 41 at %s", h, at, now)
	}
	if got := snapName("etcd-main-delta-snapshot"); got != "Incr-00000001-00000041-1893553445.gz" {
		t.Fatalf("delta lease names snapshot %q, want Incr-00000001-00000041-1893553445.gz", got)
	}
	if got := snapName("etcd-main-full-snapshot"); got != "" {
		t.Fatalf("a delta named a snapshot on the full snapshot lease: %q", got)
	}

	// A renewal without a new snapshot (a quiet delta period) keeps the name.
	now = now.Add(time.Second)
	if err := k.Update(ctx, snapshot.KindIncr, 41, ""); err != nil {
		t.Fatal(err)
	}
	if h, at := holder("etcd-main-delta-snapshot"); h != "41" || !at.Equal(now) {
		t.Fatalf("delta lease = %q at %s after a quiet period, want 41 at %s", h, at, now)
	}
	if got := snapName("etcd-main-delta-snapshot"); got != "Incr-00000001-00000041-1893553445.gz" {
		t.Fatalf("a quiet period changed the delta lease's snapshot name to %q", got)
	}

	now = now.Add(time.Minute)
	if err := k.Update(ctx, snapshot.KindFull, 1234567890123, "Full-00000000-1234567890123-1893553505.gz"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"etcd-main-full-snapshot", "etcd-main-delta-snapshot"} {
		if h, at := holder(name); h != "1234567890123" || !at.Equal(now) {
			t.Fatalf("%s = %q at %s after a full snapshot, want 1234567890123 at %s", name, h, at, now)
		}
		if got := snapName(name); got != "Full-00000000-1234567890123-1893553505.gz" {
			t.Fatalf("%s names snapshot %q after a full snapshot, want Full-00000000-1234567890123-1893553505.gz", name, got)
		}
	}

	k.DeltaName = "missing"
	if err := k.Update(ctx, snapshot.KindIncr, 50, ""); err == nil {
		t.Fatal("renewing a lease that does not exist: want an error")
	}
}
