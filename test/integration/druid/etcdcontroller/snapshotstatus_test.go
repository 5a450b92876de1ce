package etcdcontroller_test

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// renewSnapshotLease renews a snapshot lease as the backup leader's sidecar does after an upload:
// holderIdentity the revision, renewTime the time of the snapshot and, unless empty, the snapshot's name
// (this project's sidecar; an upstream one writes none).
func renewSnapshotLease(t *testing.T, namespace, name string, revision int64, at time.Time, snapName string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		lease := &coordinationv1.Lease{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, lease)).To(Succeed())
		lease.Spec.HolderIdentity = ptr.To(fmt.Sprint(revision))
		lease.Spec.RenewTime = &metav1.MicroTime{Time: at}
		if snapName != "" {
			metav1.SetMetaDataAnnotation(&lease.ObjectMeta, "snapshot.etcd.gardener.cloud/name", snapName)
		}
		g.Expect(env.Client.Update(ctx, lease)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// Druid reads the latest full and delta snapshots from the snapshot leases it creates and the sidecar
// renews (upstream's status has no field for them), and judges BackupReady from the same leases.
func TestLastSnapshotsFromLeases(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	createEtcd(t, ns, 1, withS3Store)
	etcd := waitReconciled(t, ns)
	g.Expect(lastFullSnapshot(g, ns)).To(BeNil(), "no snapshot recorded yet")
	g.Expect(lastDeltaSnapshot(g, ns)).To(BeNil(), "no snapshot recorded yet")

	// A full snapshot renews both leases (it covers every revision a delta would), then a delta follows.
	fullAt := time.Now().Add(-2 * time.Minute).Truncate(time.Second)
	fullName := fmt.Sprintf("Full-00000000-00004711-%d.gz", fullAt.Unix())
	renewSnapshotLease(t, ns, druidv1alpha1.FullSnapshotLeaseName(etcd), 4711, fullAt, fullName)
	renewSnapshotLease(t, ns, druidv1alpha1.DeltaSnapshotLeaseName(etcd), 4711, fullAt, fullName)
	deltaAt := time.Now().Add(-10 * time.Second).Add(250 * time.Millisecond)
	renewSnapshotLease(t, ns, druidv1alpha1.DeltaSnapshotLeaseName(etcd), 4800, deltaAt, "") // an upstream sidecar: no name

	wantFull := &druidv1alpha1.SnapshotStatus{EndRevision: 4711, Timestamp: metav1.NewTime(fullAt)}
	wantDelta := &druidv1alpha1.SnapshotStatus{EndRevision: 4800, Timestamp: metav1.NewTime(deltaAt.Truncate(time.Second))}
	g.Eventually(func(g Gomega) {
		g.Expect(lastFullSnapshot(g, ns)).NotTo(BeNil())
		g.Expect(lastDeltaSnapshot(g, ns)).NotTo(BeNil())
		g.Expect(lastFullSnapshot(g, ns).Name).To(Equal(ptr.To(fullName)))
		g.Expect(lastFullSnapshot(g, ns).EndRevision).To(Equal(wantFull.EndRevision))
		g.Expect(lastFullSnapshot(g, ns).Timestamp.Time).To(BeTemporally("==", wantFull.Timestamp.Time))
		g.Expect(lastDeltaSnapshot(g, ns).EndRevision).To(Equal(wantDelta.EndRevision))
		g.Expect(lastDeltaSnapshot(g, ns).Name).To(BeNil(), "the lease still names the full snapshot at 4711, not one at 4800")
		g.Expect(lastDeltaSnapshot(g, ns).Timestamp.Time).To(BeTemporally("==", wantDelta.Timestamp.Time))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(druidv1alpha1.FindCondition(getEtcd(g, ns).Status.Conditions, druidv1alpha1.ConditionTypeBackupReady).Status).To(Equal(druidv1alpha1.ConditionTrue))

	// A newer delta moves only the delta fields.
	laterAt := time.Now().Truncate(time.Second)
	deltaName := fmt.Sprintf("Incr-00004801-00004900-%d.gz", laterAt.Unix())
	renewSnapshotLease(t, ns, druidv1alpha1.DeltaSnapshotLeaseName(etcd), 4900, laterAt, deltaName)
	g.Eventually(func(g Gomega) int64 {
		return ptr.Deref(lastDeltaSnapshot(g, ns), druidv1alpha1.SnapshotStatus{}).EndRevision
	}).WithTimeout(timeout).WithPolling(poll).Should(Equal(int64(4900)))
	g.Expect(lastDeltaSnapshot(g, ns).Name).To(Equal(ptr.To(deltaName)))
	g.Expect(lastFullSnapshot(g, ns).EndRevision).To(Equal(int64(4711)))

	// Without a store there are no snapshot leases and no snapshots.
	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = nil
		metav1.SetMetaDataAnnotation(&e.ObjectMeta, "gardener.cloud/operation", "reconcile")
	})
	g.Eventually(func(g Gomega) {
		g.Expect(lastFullSnapshot(g, ns)).To(BeNil())
		g.Expect(lastDeltaSnapshot(g, ns)).To(BeNil())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
