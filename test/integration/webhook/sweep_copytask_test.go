package webhook

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

type copyTaskCase = hostileCase[*druidv1alpha1.EtcdCopyBackupsTask]

// sweepCopyTask is a valid copy task as Gardener's control-plane migration writes it: from the source
// entry's prefix to the new one, in the same bucket.
func sweepCopyTask(namespace string) *druidv1alpha1.EtcdCopyBackupsTask {
	store := func(prefix string) druidv1alpha1.StoreSpec {
		return druidv1alpha1.StoreSpec{Container: ptr.To("backups"), Prefix: prefix, Provider: ptr.To(druidv1alpha1.StorageProviderS3),
			SecretRef: &corev1.SecretReference{Name: "etcd-backup"}}
	}
	return &druidv1alpha1.EtcdCopyBackupsTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace},
		Spec: druidv1alpha1.EtcdCopyBackupsTaskSpec{
			SourceStore: store("shoot--dev--a--uid/etcd-main"), TargetStore: store("shoot--dev--a--uid2/etcd-main"),
			WaitForFinalSnapshot: &druidv1alpha1.WaitForFinalSnapshotSpec{Enabled: true, Timeout: &metav1.Duration{Duration: 5 * time.Minute}},
		},
	}
}

var hostileCopyTasks = []copyTaskCase{
	{"as Gardener writes it", func(*druidv1alpha1.EtcdCopyBackupsTask) {}, admitted},
	{"source prefix into another shoot", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.SourceStore.Prefix = "../shoot--x--y/etcd-main" }, refused("spec.sourceStore.prefix")},
	{"absolute target prefix", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore.Prefix = "/var/lib" }, refused("spec.targetStore.prefix")},
	{"target prefix of 2000 characters", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore.Prefix = strings.Repeat("t", 2000) }, refused("spec.targetStore.prefix")},
	{"target prefix with a dot segment", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore.Prefix = "a/./b" }, refused("spec.targetStore.prefix")},
	{"source prefix with a tab", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.SourceStore.Prefix = "a\tb" }, refused("spec.sourceStore.prefix")},
	{"source endpoint over ftp", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.SourceStore.EndpointOverride = ptr.To("ftp://x") }, refused("spec.sourceStore.endpointOverride")},
	{"target secret no object name", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore.SecretRef.Name = "Bad Name" }, refused("spec.targetStore.secretRef.name")},
	{"onto its source", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore = c.Spec.SourceStore }, refused("spec.targetStore must differ from spec.sourceStore")},
	{"negative wait", func(c *druidv1alpha1.EtcdCopyBackupsTask) {
		c.Spec.WaitForFinalSnapshot.Timeout.Duration = -time.Minute
	}, refused("spec.waitForFinalSnapshot.timeout")},
	{"unknown source provider", func(c *druidv1alpha1.EtcdCopyBackupsTask) {
		c.Spec.SourceStore.Provider = ptr.To(druidv1alpha1.StorageProvider("ftp"))
	}, refused("spec.sourceStore.provider")},
	{"empty target container", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore.Container = ptr.To("") }, refused("spec.targetStore.container")},
	{"source secret in another namespace", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.SourceStore.SecretRef.Namespace = "garden" }, refused("spec.sourceStore.secretRef.namespace")},
	{"source prefix with an empty segment", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.SourceStore.Prefix = "a//etcd-main" }, warned("spec.sourceStore.prefix")},
	{"upper-case target container", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore.Container = ptr.To("Backups") }, warned("spec.targetStore.container")},
}
