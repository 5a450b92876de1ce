package etcdcontroller_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/fullsnapshot"
)

// settle is how long a test watches that nothing more happens.
const settle = 3 * time.Second

func stsReplicas(ns string) func(g Gomega) int32 {
	return func(g Gomega) int32 { return ptr.Deref(statefulSet(g, ns).Spec.Replicas, -1) }
}

func stsImage(ns, container string) func(g Gomega) string {
	return func(g Gomega) string {
		return statefulset.ContainerImages(statefulSet(g, ns).Spec.Template)[container]
	}
}

func lastFullSnapshotRevision(ns string) func(g Gomega) int64 {
	return func(g Gomega) int64 {
		if s := lastFullSnapshot(g, ns); s != nil {
			return s.EndRevision
		}
		return 0
	}
}

func eventMessages(ns, reason string) func(g Gomega) []string {
	return func(g Gomega) []string {
		var messages []string
		for _, e := range etcdEvents(g, ns, reason) {
			messages = append(messages, e.Type+": "+e.Message)
		}
		return messages
	}
}

// backedUpCluster is a healthy cluster of replicas members with an S3 store and backup TLS, whose backup
// leader druid reaches at the namespace's stand-in sidecar (failing until succeedAt).
func backedUpCluster(t *testing.T, replicas int32) (string, *snapshotSidecar, *sidecars) {
	t.Helper()
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	sidecar := startSnapshotSidecar(t, ns)
	members := healthyCluster(t, ns, replicas, withS3Store, withBackupTLS)
	NewWithT(t).Expect(sidecar.count()).To(BeZero(), "no snapshot while nothing stops the members")
	return ns, sidecar, members
}

// reconcileChange changes the Etcd and asks for its reconcile, as gardenlet does.
func reconcileChange(t *testing.T, ns string, change func(*druidv1alpha1.Etcd)) {
	t.Helper()
	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) {
		change(e)
		metav1.SetMetaDataAnnotation(&e.ObjectMeta, druidv1alpha1.GardenerOperationAnnotation, druidv1alpha1.OperationReconcile)
	})
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// expectHeldBack checks that a failing snapshot holds the update: the sidecar is asked again (with
// back-off), druid says why in lastOperation, lastErrors and a Warning event, and the StatefulSet is not
// changed (check).
func expectHeldBack(t *testing.T, ns string, sidecar *snapshotSidecar, what string, check func(g Gomega)) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(sidecar.count).WithTimeout(timeout).WithPolling(poll).Should(BeNumerically(">=", 2), "retried")
	check(g)
	g.Eventually(func(g Gomega) {
		etcd := getEtcd(g, ns)
		g.Expect(etcd.Status.LastOperation).NotTo(BeNil())
		g.Expect(etcd.Status.LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateError))
		g.Expect(etcd.Status.LastOperation.Description).To(ContainSubstring(what + " held back: the full snapshot before it failed"))
		g.Expect(etcd.Status.LastErrors).To(ContainElement(HaveField("Code", etcdcontroller.ErrorCodeFullSnapshotBeforeUpdate)))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(warningEvents(g, ns, etcdcontroller.EventReasonFullSnapshotBeforeUpdateFailed)).NotTo(BeEmpty())
	g.Consistently(check).WithTimeout(settle).WithPolling(poll).Should(Succeed())
}

// Hibernation waits for the full snapshot: while the backup leader's /snapshot/full fails, the StatefulSet
// stays at 3 and druid retries, also after a restart; once it succeeds the StatefulSet goes to 0, exactly
// one snapshot was taken (a druid restarted then takes none), and its revision is status.lastFullSnapshot
// although no snapshot lease was renewed.
func TestHibernationWaitsForTheFullSnapshot(t *testing.T) {
	g := NewWithT(t)
	ns, sidecar, _ := backedUpCluster(t, 3)

	reconcileChange(t, ns, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 0 })
	expectHeldBack(t, ns, sidecar, "scaling from 3 to 0 replicas (hibernation)", func(g Gomega) {
		g.Expect(stsReplicas(ns)(g)).To(Equal(int32(3)))
	})
	// A restarted druid holds the update as well, and asks again.
	requests := sidecar.count()
	restartDruid(t)
	g.Eventually(sidecar.count).WithTimeout(timeout).WithPolling(poll).Should(BeNumerically(">", requests))
	g.Consistently(stsReplicas(ns)).WithTimeout(settle).WithPolling(poll).Should(Equal(int32(3)))

	sidecar.succeedAt(4711)
	g.Eventually(stsReplicas(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(0)))
	g.Expect(sidecar.takenCount()).To(Equal(1))
	g.Eventually(lastFullSnapshotRevision(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int64(4711)))
	g.Expect(lastFullSnapshot(g, ns).Name).To(HaveValue(HavePrefix("Full-00000000-00004711-")))
	g.Eventually(eventMessages(ns, etcdcontroller.EventReasonFullSnapshotBeforeHibernation)).WithTimeout(timeout).WithPolling(poll).Should(
		ConsistOf(ContainSubstring("Normal: full snapshot at revision 4711 taken before scaling from 3 to 0 replicas (hibernation)")))
	waitReconciled(t, ns)
	g.Consistently(sidecar.takenCount).WithTimeout(settle).WithPolling(poll).Should(Equal(1), "one snapshot per update")
	// Nor does a druid restarted after the update take another one.
	restartDruid(t)
	reconcileChange(t, ns, func(*druidv1alpha1.Etcd) {})
	waitReconciled(t, ns)
	g.Consistently(sidecar.takenCount).WithTimeout(settle).WithPolling(poll).Should(Equal(1), "one snapshot per update, also after a restart")
	g.Expect(lastFullSnapshotRevision(ns)(g)).To(Equal(int64(4711)))

	// Waking up takes none (nothing runs to snapshot); hibernating again is another update: a new snapshot.
	reconcileChange(t, ns, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 3 })
	g.Eventually(stsReplicas(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(3)))
	waitReconciled(t, ns)
	g.Expect(sidecar.takenCount()).To(Equal(1))
	setStatefulSetRolledOut(t, ns, 3)
	expectCondition(t, ns, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonQuorate)
	sidecar.succeedAt(4800)
	reconcileChange(t, ns, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 0 })
	g.Eventually(stsReplicas(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(0)))
	g.Expect(sidecar.takenCount()).To(Equal(2))
	g.Eventually(lastFullSnapshotRevision(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int64(4800)))
}

// A new etcd image waits for the full snapshot like hibernation: the pod template keeps the old image while
// the snapshot fails, and takes the new one after exactly one successful snapshot.
func TestImageChangeWaitsForTheFullSnapshot(t *testing.T) {
	g := NewWithT(t)
	ns, sidecar, _ := backedUpCluster(t, 3)
	const newImage = "example.org/etcd-wrapper:v2"

	reconcileChange(t, ns, func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Image = ptr.To(newImage) })
	expectHeldBack(t, ns, sidecar, "changing the etcd image from "+testConfig.Images.EtcdWrapper+" to "+newImage, func(g Gomega) {
		g.Expect(stsImage(ns, "etcd")(g)).To(Equal(testConfig.Images.EtcdWrapper))
	})

	sidecar.succeedAt(815)
	g.Eventually(stsImage(ns, "etcd")).WithTimeout(timeout).WithPolling(poll).Should(Equal(newImage))
	g.Expect(stsReplicas(ns)(g)).To(Equal(int32(3)))
	g.Expect(sidecar.takenCount()).To(Equal(1))
	g.Eventually(lastFullSnapshotRevision(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int64(815)))
	g.Eventually(eventMessages(ns, etcdcontroller.EventReasonFullSnapshotBeforeImageChange)).WithTimeout(timeout).WithPolling(poll).Should(
		ConsistOf(ContainSubstring("full snapshot at revision 815 taken before changing the etcd image")))
	waitReconciled(t, ns)
	g.Consistently(sidecar.takenCount).WithTimeout(settle).WithPolling(poll).Should(Equal(1), "one snapshot per update")
}

// A druid that took the snapshot and stopped before it scaled (the StatefulSet carries the record of that
// update) does not take another one when it comes back: it scales, and the status shows the recorded
// snapshot.
func TestSnapshotTakenBeforeADruidRestartIsNotTakenAgain(t *testing.T) {
	g := NewWithT(t)
	ns, sidecar := hibernateOnARecordedSnapshot(t, time.Minute)
	g.Eventually(lastFullSnapshotRevision(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int64(4711)))
	waitReconciled(t, ns)
	g.Consistently(sidecar.count).WithTimeout(settle).WithPolling(poll).Should(BeZero(), "the snapshot of this update was taken already")
}

// A recorded snapshot that is older than the update may wait for (the update was held that long by
// something else) is taken again before the update goes ahead.
func TestSnapshotRecordedLongAgoIsTakenAgain(t *testing.T) {
	g := NewWithT(t)
	ns, sidecar := hibernateOnARecordedSnapshot(t, 10*time.Minute)
	g.Expect(sidecar.takenCount()).To(Equal(1))
	g.Eventually(lastFullSnapshotRevision(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int64(9999)))
}

// hibernateOnARecordedSnapshot leaves the record of a snapshot at revision 4711, taken age ago, for the
// hibernation of a 3-member cluster, as a druid that stopped before it scaled leaves it, lets druid
// reconcile (a snapshot now would be at 9999) and returns once the StatefulSet is at 0.
func hibernateOnARecordedSnapshot(t *testing.T, age time.Duration) (string, *snapshotSidecar) {
	g := NewWithT(t)
	ns, sidecar, _ := backedUpCluster(t, 3)
	sidecar.succeedAt(9999)

	// Hibernation requested while the spec reconcile is suspended, so that this druid does not act yet.
	reconcileChange(t, ns, func(e *druidv1alpha1.Etcd) {
		e.Spec.Replicas = 0
		metav1.SetMetaDataAnnotation(&e.ObjectMeta, druidv1alpha1.SuspendEtcdSpecReconcileAnnotation, "true")
	})
	// What the previous druid left behind: the record of its snapshot for exactly this update.
	etcd := getEtcd(g, ns)
	target := etcd.DeepCopy()
	druidv1alpha1.SetDefaults(target)
	rendered, err := statefulset.Render(ctx, env.Client, testConfig.Images, testConfig.LocalBackup, target)
	g.Expect(err).NotTo(HaveOccurred())
	at := time.Now().Add(-age).UTC().Truncate(time.Second)
	g.Eventually(func(g Gomega) {
		sts := statefulSet(g, ns)
		key := strings.Join([]string{"etcd-generation=" + itoa(etcd.Generation), "statefulset-generation=" + itoa(sts.Generation),
			"replicas=0", "pod-template=" + rendered.Checksum}, ",")
		record := fullsnapshot.Record{For: key, Revision: 4711, Name: snapshotName(4711, at), TakenAt: metav1.NewTime(at)}
		metav1.SetMetaDataAnnotation(&sts.ObjectMeta, fullsnapshot.BeforeUpdateAnnotation, record.Encode())
		g.Expect(env.Client.Update(ctx, sts)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) { delete(e.Annotations, druidv1alpha1.SuspendEtcdSpecReconcileAnnotation) })
	g.Eventually(stsReplicas(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(0)))
	return ns, sidecar
}

// Without a backup store there is nothing to snapshot to: hibernation goes ahead at once and says so.
func TestHibernationWithoutBackupStoreTakesNoSnapshot(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	sidecar := startSnapshotSidecar(t, ns)
	sidecar.succeedAt(1)
	healthyCluster(t, ns, 3, withBackupTLS)

	reconcileChange(t, ns, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 0 })
	g.Eventually(stsReplicas(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(0)))
	waitReconciled(t, ns)
	g.Expect(eventMessages(ns, etcdcontroller.EventReasonNoFullSnapshotBeforeUpdate)(g)).To(ContainElement(
		"Normal: scaling from 3 to 0 replicas (hibernation) without a full snapshot first: no backup store is configured"))
	g.Consistently(sidecar.count).WithTimeout(settle).WithPolling(poll).Should(BeZero())
	g.Expect(lastFullSnapshot(g, ns)).To(BeNil())
}

// Without a client certificate druid cannot ask the sidecar: the update goes ahead with a Warning.
func TestHibernationWithoutClientCertificateGoesAheadWithAWarning(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	sidecar := startSnapshotSidecar(t, ns)
	sidecar.succeedAt(1)
	healthyCluster(t, ns, 3, withS3Store, withBackupTLS, func(e *druidv1alpha1.Etcd) { e.Spec.Backup.TLS.ClientTLSSecretRef.Name = "" })

	reconcileChange(t, ns, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 0 })
	g.Eventually(stsReplicas(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(0)))
	g.Expect(eventMessages(ns, etcdcontroller.EventReasonNoFullSnapshotBeforeUpdate)(g)).To(ContainElement(And(
		HavePrefix(corev1.EventTypeWarning+": scaling from 3 to 0 replicas (hibernation) without a full snapshot first: "),
		ContainSubstring("clientTLSSecretRef is not set"))))
	g.Expect(sidecar.count()).To(BeZero())
}

// A cluster without quorum cannot snapshot; hibernating it must stay possible: the snapshot is tried, and
// when it fails the update goes ahead with a Warning.
func TestHibernationWithoutQuorumGoesAheadWithAWarning(t *testing.T) {
	g := NewWithT(t)
	ns, sidecar, members := backedUpCluster(t, 3)
	loseQuorumByLeases(t, ns, members)

	reconcileChange(t, ns, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 0 })
	g.Eventually(stsReplicas(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(0)))
	g.Expect(eventMessages(ns, etcdcontroller.EventReasonNoFullSnapshotBeforeUpdate)(g)).To(ContainElement(And(
		HavePrefix(corev1.EventTypeWarning+": scaling from 3 to 0 replicas (hibernation) without a full snapshot first: the full snapshot failed"),
		ContainSubstring("the cluster has no quorum"))))
	g.Expect(sidecar.count()).To(Equal(1), "one attempt, then the update goes ahead")
}

// Leases that say "no quorum" may be stale while etcd serves: the snapshot is tried first, and taken.
func TestHibernationTakesTheSnapshotAlsoWhenTheLeasesShowNoQuorum(t *testing.T) {
	g := NewWithT(t)
	ns, sidecar, members := backedUpCluster(t, 3)
	sidecar.succeedAt(42)
	loseQuorumByLeases(t, ns, members)

	reconcileChange(t, ns, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 0 })
	g.Eventually(stsReplicas(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(0)))
	g.Expect(sidecar.takenCount()).To(Equal(1))
	g.Expect(eventMessages(ns, etcdcontroller.EventReasonFullSnapshotBeforeHibernation)(g)).To(ContainElement(ContainSubstring("revision 42")))
}

// loseQuorumByLeases fails two of the three members as their leases and pods show it and waits until
// druid reports the cluster not Ready.
func loseQuorumByLeases(t *testing.T, ns string, members *sidecars) {
	t.Helper()
	for i := 0; i < 2; i++ {
		failMember(t, ns, members, i)
	}
	NewWithT(t).Eventually(func(g Gomega) {
		c := druidv1alpha1.FindCondition(getEtcd(g, ns).Status.Conditions, druidv1alpha1.ConditionTypeReady)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).NotTo(Equal(druidv1alpha1.ConditionTrue))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// A sidecar that refuses druid's client certificate (401) would refuse it for ever: druid says so (a
// Warning event and lastErrors naming the refusal and what to check), holds the update for the refusal
// grace and at least three attempts, and then lets hibernation go ahead without the snapshot, with a
// Warning: the volumes stay, and the sidecar that refused keeps uploading deltas.
func TestHibernationRefusedByTheSidecarGoesAheadAfterTheGrace(t *testing.T) {
	g := NewWithT(t)
	ns, sidecar, _ := backedUpCluster(t, 3)
	sidecar.refuse()

	reconcileChange(t, ns, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 0 })
	g.Eventually(eventMessages(ns, etcdcontroller.EventReasonFullSnapshotBeforeUpdateRefused)).WithTimeout(timeout).WithPolling(poll).Should(
		ContainElement(And(HavePrefix(corev1.EventTypeWarning+": the sidecar refused druid's request for a full snapshot before scaling from 3 to 0 replicas (hibernation)"),
			ContainSubstring("401 Unauthorized"), ContainSubstring("spec.backup.tls"))))
	g.Eventually(stsReplicas(ns)).WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(0)))
	g.Expect(sidecar.count()).To(BeNumerically(">=", 3), "held for at least three refused attempts")
	g.Expect(sidecar.takenCount()).To(BeZero())
	g.Expect(eventMessages(ns, etcdcontroller.EventReasonNoFullSnapshotBeforeUpdate)(g)).To(ContainElement(And(
		HavePrefix(corev1.EventTypeWarning+": scaling from 3 to 0 replicas (hibernation) without a full snapshot first: the sidecar refused"),
		ContainSubstring("401 Unauthorized"))))
}

// The same for new images: the refusal is surfaced in lastErrors while the update waits, and the image
// changes once the grace has passed.
func TestImageChangeRefusedByTheSidecarGoesAheadAfterTheGrace(t *testing.T) {
	g := NewWithT(t)
	ns, sidecar, _ := backedUpCluster(t, 3)
	sidecar.refuse()
	const newImage = "example.org/etcd-wrapper:v2"

	reconcileChange(t, ns, func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Image = ptr.To(newImage) })
	g.Eventually(func(g Gomega) {
		g.Expect(getEtcd(g, ns).Status.LastErrors).To(ContainElement(And(
			HaveField("Code", etcdcontroller.ErrorCodeFullSnapshotRefused),
			HaveField("Description", ContainSubstring("401 Unauthorized")))))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(stsImage(ns, "etcd")).WithTimeout(timeout).WithPolling(poll).Should(Equal(newImage))
	g.Expect(sidecar.count()).To(BeNumerically(">=", 3))
}
