package hostile

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

type copyTaskCase = Case[*druidv1alpha1.EtcdCopyBackupsTask]

// CopyTask is a valid copy task as Gardener's control-plane migration writes it: from the source
// entry's prefix to the new one, in the same bucket.
func CopyTask(namespace string) *druidv1alpha1.EtcdCopyBackupsTask {
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

// CopyTasks change one thing of CopyTask.
var CopyTasks = []copyTaskCase{
	{"as Gardener writes it", func(*druidv1alpha1.EtcdCopyBackupsTask) {}, Admitted},
	{"source prefix into another shoot", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.SourceStore.Prefix = "../shoot--x--y/etcd-main" }, Refused("spec.sourceStore.prefix")},
	{"absolute target prefix", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore.Prefix = "/var/lib" }, Refused("spec.targetStore.prefix")},
	{"target prefix of 2000 characters", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore.Prefix = strings.Repeat("t", 2000) }, Refused("spec.targetStore.prefix")},
	{"target prefix with a dot segment", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore.Prefix = "a/./b" }, Refused("spec.targetStore.prefix")},
	{"source prefix with a tab", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.SourceStore.Prefix = "a\tb" }, Refused("spec.sourceStore.prefix")},
	{"source endpoint over ftp", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.SourceStore.EndpointOverride = ptr.To("ftp://x") }, Refused("spec.sourceStore.endpointOverride")},
	{"target secret no object name", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore.SecretRef.Name = "Bad Name" }, Refused("spec.targetStore.secretRef.name")},
	{"onto its source", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore = c.Spec.SourceStore }, Refused("spec.targetStore must differ from spec.sourceStore")},
	{"onto its source by an alias and an empty segment", func(c *druidv1alpha1.EtcdCopyBackupsTask) {
		c.Spec.TargetStore = *c.Spec.SourceStore.DeepCopy()
		c.Spec.TargetStore.Provider = ptr.To(druidv1alpha1.StorageProvider("aws"))
		c.Spec.TargetStore.Prefix = strings.Replace(c.Spec.SourceStore.Prefix, "/", "//", 1) + "/"
	}, Refused("spec.targetStore must differ from spec.sourceStore")},
	{"negative wait", func(c *druidv1alpha1.EtcdCopyBackupsTask) {
		c.Spec.WaitForFinalSnapshot.Timeout.Duration = -time.Minute
	}, Refused("spec.waitForFinalSnapshot.timeout")},
	{"unknown source provider", func(c *druidv1alpha1.EtcdCopyBackupsTask) {
		c.Spec.SourceStore.Provider = ptr.To(druidv1alpha1.StorageProvider("ftp"))
	}, Refused("spec.sourceStore.provider")},
	{"empty target container", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore.Container = ptr.To("") }, Refused("spec.targetStore.container")},
	{"source secret in another namespace", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.SourceStore.SecretRef.Namespace = "garden" }, Refused("spec.sourceStore.secretRef.namespace")},
	{"source prefix with an empty segment", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.SourceStore.Prefix = "a//etcd-main" }, Warned("spec.sourceStore.prefix")},
	{"upper-case target container", func(c *druidv1alpha1.EtcdCopyBackupsTask) { c.Spec.TargetStore.Container = ptr.To("Backups") }, Warned("spec.targetStore.container")},
}
