package etcdcontroller_test

import (
	"encoding/json"
	"fmt"
	"io"
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

// etcdTable is the Etcd as `kubectl get etcd -o wide` receives it: the apiserver's Table of the CRD's
// printer columns (kubectl hides the columns of priority > 0 unless -o wide).
func etcdTable(g Gomega, namespace string) map[string]any {
	resp, err := env.APIServerGet(ctx, "/apis/druid.gardener.cloud/v1alpha1/namespaces/"+namespace+"/etcds/"+etcdName,
		"application/json;as=Table;v=v1;g=meta.k8s.io")
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	table := &metav1.Table{}
	g.Expect(json.Unmarshal(body, table)).To(Succeed())
	g.Expect(table.Rows).To(HaveLen(1))
	g.Expect(table.Rows[0].Cells).To(HaveLen(len(table.ColumnDefinitions)))
	cells := map[string]any{}
	for i, c := range table.ColumnDefinitions {
		cells[c.Name] = table.Rows[0].Cells[i]
	}
	return cells
}

// The status shows the latest full and delta snapshots the sidecar recorded in the snapshot leases, and
// `kubectl get etcd -o wide` shows them as columns.
func TestStatusShowsLastSnapshotsFromLeases(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	createEtcd(t, ns, 1, withS3Store)
	etcd := waitReconciled(t, ns)
	g.Expect(etcd.Status.LastFullSnapshot).To(BeNil(), "no snapshot recorded yet")
	g.Expect(etcd.Status.LastDeltaSnapshot).To(BeNil(), "no snapshot recorded yet")

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
		etcd := getEtcd(g, ns)
		g.Expect(etcd.Status.LastFullSnapshot).NotTo(BeNil())
		g.Expect(etcd.Status.LastDeltaSnapshot).NotTo(BeNil())
		g.Expect(etcd.Status.LastFullSnapshot.Name).To(Equal(ptr.To(fullName)))
		g.Expect(etcd.Status.LastFullSnapshot.EndRevision).To(Equal(wantFull.EndRevision))
		g.Expect(etcd.Status.LastFullSnapshot.Timestamp.Time).To(BeTemporally("==", wantFull.Timestamp.Time))
		g.Expect(etcd.Status.LastDeltaSnapshot.EndRevision).To(Equal(wantDelta.EndRevision))
		g.Expect(etcd.Status.LastDeltaSnapshot.Name).To(BeNil(), "the lease still names the full snapshot at 4711, not one at 4800")
		g.Expect(etcd.Status.LastDeltaSnapshot.Timestamp.Time).To(BeTemporally("==", wantDelta.Timestamp.Time))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(druidv1alpha1.FindCondition(getEtcd(g, ns).Status.Conditions, druidv1alpha1.ConditionTypeBackupReady).Status).To(Equal(druidv1alpha1.ConditionTrue))

	// The server-side table kubectl prints: revisions as numbers, the times as their age.
	cells := etcdTable(g, ns)
	g.Expect(cells).To(HaveKeyWithValue("Full Snapshot Revision", BeNumerically("==", 4711)))
	g.Expect(cells).To(HaveKeyWithValue("Last Full Snapshot", MatchRegexp(`^2m(\d+s)?$`)))
	g.Expect(cells).To(HaveKeyWithValue("Delta Snapshot Revision", BeNumerically("==", 4800)))
	g.Expect(cells).To(HaveKeyWithValue("Last Delta Snapshot", MatchRegexp(`^\d+s$`)))

	// A newer delta moves only the delta fields.
	laterAt := time.Now().Truncate(time.Second)
	deltaName := fmt.Sprintf("Incr-00004801-00004900-%d.gz", laterAt.Unix())
	renewSnapshotLease(t, ns, druidv1alpha1.DeltaSnapshotLeaseName(etcd), 4900, laterAt, deltaName)
	g.Eventually(func(g Gomega) int64 {
		return ptr.Deref(getEtcd(g, ns).Status.LastDeltaSnapshot, druidv1alpha1.SnapshotStatus{}).EndRevision
	}).WithTimeout(timeout).WithPolling(poll).Should(Equal(int64(4900)))
	g.Expect(getEtcd(g, ns).Status.LastDeltaSnapshot.Name).To(Equal(ptr.To(deltaName)))
	g.Expect(getEtcd(g, ns).Status.LastFullSnapshot.EndRevision).To(Equal(int64(4711)))

	// Without a store there are no snapshot leases and no snapshot fields.
	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = nil
		metav1.SetMetaDataAnnotation(&e.ObjectMeta, "gardener.cloud/operation", "reconcile")
	})
	g.Eventually(func(g Gomega) {
		etcd := getEtcd(g, ns)
		g.Expect(etcd.Status.LastFullSnapshot).To(BeNil())
		g.Expect(etcd.Status.LastDeltaSnapshot).To(BeNil())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
