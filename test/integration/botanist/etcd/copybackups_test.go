package etcd_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

// withSourceEntry creates what gardenlet creates on the destination seed of a migration: a bucket standing
// for the source seed's and the `source-` BackupEntry on it. It returns the source bucket's name.
func (s shoot) withSourceEntry(t *testing.T) string {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	bucket := "bb-src-" + rand.String(8)
	bb := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: bucket},
		Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "local"}, Region: "us-east-1",
			SecretRef: corev1.SecretReference{Name: createGardenSecret(t, "bucket-"+bucket, nil), Namespace: "garden"}},
	}
	g.Expect(env.Client.Create(ctx, bb)).To(Succeed())
	name := "source-" + s.entry
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "local"}, Region: "us-east-1",
			BucketName: bucket, SecretRef: corev1.SecretReference{Name: createGardenSecret(t, "entry-"+name, nil), Namespace: "garden"}},
	}
	g.Expect(env.Client.Create(ctx, be)).To(Succeed())
	t.Cleanup(func() {
		deleteAndWaitGone(t, be)
		deleteAndWaitGone(t, bb)
	})
	return bucket
}

// shootName is the Shoot the tests restore; gardenlet names the copy task after it.
const shootName = "local"

// copyTask waits until the component created the shoot's EtcdCopyBackupsTask and returns it.
func copyTask(t *testing.T, namespace string) *druidv1alpha1.EtcdCopyBackupsTask {
	t.Helper()
	task := &druidv1alpha1.EtcdCopyBackupsTask{}
	key := client.ObjectKey{Namespace: namespace, Name: shootName}
	NewWithT(t).Eventually(func() error { return env.Client.Get(context.Background(), key, task) }, timeout, interval).Should(Succeed())
	return task
}

// finishCopy plays druid: it reports the task's outcome as druid mirrors it from the worker Job.
func finishCopy(t *testing.T, task *druidv1alpha1.EtcdCopyBackupsTask, t2 druidv1alpha1.ConditionType, lastError string) {
	t.Helper()
	task.Status.Conditions = []druidv1alpha1.Condition{{Type: t2, Status: druidv1alpha1.ConditionTrue, Reason: "Test", Message: "set by the test",
		LastTransitionTime: metav1.Now(), LastUpdateTime: metav1.Now()}}
	if lastError != "" {
		task.Status.LastError = ptr.To(lastError)
	}
	NewWithT(t).Expect(env.Client.Status().Update(context.Background(), task)).To(Succeed())
}

func copyBackupsAsync(c etcd.Interface, source etcd.RestoreSource) <-chan error {
	done := make(chan error, 1)
	go func() { done <- c.CopyBackups(context.Background(), source) }()
	return done
}

func TestCopyBackupsCopiesFromTheSourceEntryIntoTheShootsStoreAndRemovesTheTask(t *testing.T) {
	g := NewWithT(t)
	s := newShoot(t)
	sourceBucket := s.withSourceEntry(t)
	c := etcd.New(env.Client, s.namespace, s.mainValues())
	done := copyBackupsAsync(c, etcd.RestoreSource{ShootName: shootName, BackupEntryName: "source-" + s.entry})

	task := copyTask(t, s.namespace)
	prefix := s.entry + "/etcd-main"
	g.Expect(task.Spec.SourceStore).To(Equal(druidv1alpha1.StoreSpec{Container: ptr.To(sourceBucket), Prefix: prefix,
		Provider: ptr.To(druidv1alpha1.StorageProviderLocal), SecretRef: &corev1.SecretReference{Name: "source-etcd-backup", Namespace: s.namespace}}),
		"Gardener's case: the source entry reaches the prefix the shoot's entry wrote on the source seed")
	g.Expect(task.Spec.TargetStore).To(Equal(druidv1alpha1.StoreSpec{Container: ptr.To(s.bucket), Prefix: prefix,
		Provider: ptr.To(druidv1alpha1.StorageProviderLocal), SecretRef: &corev1.SecretReference{Name: "etcd-backup", Namespace: s.namespace}}))
	g.Expect(task.Spec.WaitForFinalSnapshot).NotTo(BeNil())
	g.Expect(task.Spec.WaitForFinalSnapshot.Enabled).To(BeTrue(), "the copy waits for the source's final snapshot")
	g.Expect(task.Spec.WaitForFinalSnapshot.Timeout).To(Equal(&metav1.Duration{Duration: 5 * time.Minute}), "gardenlet's timeout for the final snapshot")
	g.Expect(task.Spec.PodLabels).To(Equal(map[string]string{
		"networking.gardener.cloud/to-dns":              "allowed",
		"networking.gardener.cloud/to-public-networks":  "allowed",
		"networking.gardener.cloud/to-private-networks": "allowed",
	}), "the worker reaches DNS and both stores under a Gardener seed's policies")
	g.Consistently(done, "300ms", interval).ShouldNot(Receive(), "CopyBackups returned before the task finished")

	finishCopy(t, task, druidv1alpha1.EtcdCopyBackupsTaskSucceeded, "")
	g.Eventually(done, timeout, interval).Should(Receive(BeNil()))
	g.Eventually(func() error {
		return env.Client.Get(context.Background(), client.ObjectKeyFromObject(task), &druidv1alpha1.EtcdCopyBackupsTask{})
	}, timeout, interval).Should(Satisfy(func(err error) bool { return client.IgnoreNotFound(err) == nil && err != nil }), "the finished task is deleted")
}

func TestCopyBackupsReportsAFailedCopyAndStartsAnotherOnTheNextCall(t *testing.T) {
	g := NewWithT(t)
	s := newShoot(t)
	s.withSourceEntry(t)
	c := etcd.New(env.Client, s.namespace, s.mainValues())
	source := etcd.RestoreSource{ShootName: shootName, BackupEntryName: "source-" + s.entry, Prefix: "shoot--other--ns--uid/etcd-main"}

	done := copyBackupsAsync(c, source)
	failed := copyTask(t, s.namespace)
	g.Expect(failed.Spec.SourceStore.Prefix).To(Equal("shoot--other--ns--uid/etcd-main"), "an explicit prefix wins")
	finishCopy(t, failed, druidv1alpha1.EtcdCopyBackupsTaskFailed, "source store unreachable")
	var err error
	g.Eventually(done, timeout, interval).Should(Receive(&err))
	g.Expect(err).To(MatchError(ContainSubstring("source store unreachable")))
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(failed), &druidv1alpha1.EtcdCopyBackupsTask{})).
		To(Succeed(), "the failed task stays for inspection")

	done = copyBackupsAsync(c, source)
	var retry *druidv1alpha1.EtcdCopyBackupsTask
	g.Eventually(func() types.UID {
		retry = copyTask(t, s.namespace)
		return retry.UID
	}, timeout, interval).ShouldNot(Equal(failed.UID), "the failed task is replaced")
	finishCopy(t, retry, druidv1alpha1.EtcdCopyBackupsTaskSucceeded, "")
	g.Eventually(done, timeout, interval).Should(Receive(BeNil()))
}

func TestCopyBackupsCopiesNothingOnceTheEtcdExists(t *testing.T) {
	g := NewWithT(t)
	s := newShoot(t)
	s.withSourceEntry(t)
	c := etcd.New(env.Client, s.namespace, s.mainValues())
	g.Expect(c.Deploy(context.Background())).To(Succeed())

	g.Expect(c.CopyBackups(context.Background(), etcd.RestoreSource{ShootName: shootName, BackupEntryName: "source-" + s.entry})).To(Succeed())
	tasks := &druidv1alpha1.EtcdCopyBackupsTaskList{}
	g.Expect(env.Client.List(context.Background(), tasks, client.InNamespace(s.namespace))).To(Succeed())
	g.Expect(tasks.Items).To(BeEmpty(), "a deployed etcd has backups of its own; a second copy would mix older ones in")
}

func TestCopyBackupsDoesNotInterruptARunningCopyFromAnotherSource(t *testing.T) {
	g := NewWithT(t)
	s := newShoot(t)
	s.withSourceEntry(t)
	c := etcd.New(env.Client, s.namespace, s.mainValues())
	done := copyBackupsAsync(c, etcd.RestoreSource{ShootName: shootName, BackupEntryName: "source-" + s.entry, Prefix: "shoot--old--ns--uid/etcd-main"})
	running := copyTask(t, s.namespace)

	err := c.CopyBackups(context.Background(), etcd.RestoreSource{ShootName: shootName, BackupEntryName: "source-" + s.entry})
	g.Expect(err).To(MatchError(ContainSubstring("still running")))
	current := copyTask(t, s.namespace)
	g.Expect(current.UID).To(Equal(running.UID), "the running copy is kept")

	finishCopy(t, current, druidv1alpha1.EtcdCopyBackupsTaskSucceeded, "")
	g.Eventually(done, timeout, interval).Should(Receive(BeNil()))
}

// Gardener's check: a destination that backs up where the source did means the shoot's entry was not
// switched to the destination seed's bucket; copying nothing would hide that.
func TestCopyBackupsFailsWhenTheSourceIsTheShootsStore(t *testing.T) {
	g := NewWithT(t)
	s := newShoot(t)
	// The destination seed backs up into the source seed's bucket: the source entry names the same bucket.
	name := "source-" + s.entry
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "local"}, Region: "us-east-1",
			BucketName: s.bucket, SecretRef: corev1.SecretReference{Name: createGardenSecret(t, "entry-"+name, nil), Namespace: "garden"}},
	}
	g.Expect(env.Client.Create(context.Background(), be)).To(Succeed())
	t.Cleanup(func() { deleteAndWaitGone(t, be) })

	c := etcd.New(env.Client, s.namespace, s.mainValues())
	err := c.CopyBackups(context.Background(), etcd.RestoreSource{ShootName: shootName, BackupEntryName: name})
	g.Expect(err).To(MatchError(And(ContainSubstring("same store"), ContainSubstring(s.bucket+"/"+s.entry+"/etcd-main"))))
	tasks := &druidv1alpha1.EtcdCopyBackupsTaskList{}
	g.Expect(env.Client.List(context.Background(), tasks, client.InNamespace(s.namespace))).To(Succeed())
	g.Expect(tasks.Items).To(BeEmpty(), "nothing is copied onto itself")
}

func TestCopyBackupsRequiresTheShootName(t *testing.T) {
	g := NewWithT(t)
	s := newShoot(t)
	c := etcd.New(env.Client, s.namespace, s.mainValues())
	g.Expect(c.CopyBackups(context.Background(), etcd.RestoreSource{BackupEntryName: "source-" + s.entry})).
		To(MatchError(ContainSubstring("RestoreSource.ShootName is required")))
}

// An earlier version named the task etcd-main-copy-backups; a leftover (here: one still running, which would
// copy into the same target) is deleted before the task of the shoot's name starts.
func TestCopyBackupsDeletesALeftoverTaskOfTheLegacyName(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	s.withSourceEntry(t)
	c := etcd.New(env.Client, s.namespace, s.mainValues())
	done := copyBackupsAsync(c, etcd.RestoreSource{ShootName: shootName, BackupEntryName: "source-" + s.entry})
	task := copyTask(t, s.namespace)
	legacy := &druidv1alpha1.EtcdCopyBackupsTask{ObjectMeta: metav1.ObjectMeta{Name: etcd.LegacyCopyBackupsTaskName, Namespace: s.namespace}, Spec: *task.Spec.DeepCopy()}
	finishCopy(t, task, druidv1alpha1.EtcdCopyBackupsTaskSucceeded, "")
	g.Eventually(done, timeout, interval).Should(Receive(BeNil()))
	g.Expect(env.Client.Create(ctx, legacy)).To(Succeed())

	// The Etcd is not deployed yet (a restore retried after an upgrade): the copy runs again.
	done = copyBackupsAsync(c, etcd.RestoreSource{ShootName: shootName, BackupEntryName: "source-" + s.entry})
	task = copyTask(t, s.namespace)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(legacy), &druidv1alpha1.EtcdCopyBackupsTask{})).
		To(Satisfy(apierrors.IsNotFound), "the leftover is gone before the new task is created")
	finishCopy(t, task, druidv1alpha1.EtcdCopyBackupsTaskSucceeded, "")
	g.Eventually(done, timeout, interval).Should(Receive(BeNil()))
}

// On the source seed, a Deploy after the migration (a retried flow, a regular reconcile) must not bring the
// etcd back: it would back up into the prefix the destination seed copies from.
func TestDeployRefusesAMigratedBackupEntry(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	g.Eventually(func(g Gomega) {
		g.Expect(getEntry(g, s.entry).Status.LastOperation).NotTo(BeNil())
	}, timeout, interval).Should(Succeed())
	be := getEntry(g, s.entry)
	patch := client.MergeFrom(be.DeepCopy())
	be.Annotations = map[string]string{extensionsv1alpha1.OperationAnnotation: extensionsv1alpha1.OperationMigrate}
	g.Expect(env.Client.Patch(ctx, be, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getEntry(g, s.entry).Status.LastOperation.Type).To(Equal(extensionsv1alpha1.LastOperationTypeMigrate))
	}, timeout, interval).Should(Succeed())

	v := s.mainValues()
	v.WaitTimeout = time.Second
	err := etcd.New(env.Client, s.namespace, v).Deploy(ctx)
	g.Expect(err).To(MatchError(ContainSubstring("migrated to another seed")))
	g.Expect(etcdExists(s.namespace, "etcd-main")).To(BeFalse())
}
