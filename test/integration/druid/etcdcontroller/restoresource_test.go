package etcdcontroller_test

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// A new Etcd with restore source annotations gets them as the sidecar's flags: the source's prefix in the
// Etcd's own store, and the target revision, beside its own --store-prefix.
func TestRestoreSourceAnnotationsReachTheSidecar(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	createEtcd(t, ns, 3, withS3Store, func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{druidv1alpha1.RestoreSourcePrefixAnnotation: "shoot--a--old/etcd-main",
			druidv1alpha1.RestoreSourceRevisionAnnotation: "4711"}
	})
	waitReconciled(t, ns)
	g.Eventually(func(g Gomega) {
		args := sidecarArgs(g, statefulSet(g, ns))
		g.Expect(args).To(ContainElements("--store-prefix=shoot--a/etcd-main",
			"--restore-source-store-prefix=shoot--a--old/etcd-main", "--restore-source-revision=4711"))
		g.Expect(args).NotTo(ContainElement(HavePrefix("--restore-source-time")))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// Without the validation webhook (as under gardenlet) druid refuses a new Etcd whose source is its own
// prefix itself, naming the annotation, and creates no StatefulSet: the sidecar must never restore a
// cluster's own prefix onto itself.
func TestReconcilerRefusesARestoreSourceThatIsTheOwnPrefix(t *testing.T) {
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	etcd := createEtcd(t, ns, 1, withS3Store, func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{druidv1alpha1.RestoreSourcePrefixAnnotation: e.Spec.Backup.Store.Prefix}
	})
	expectRefused(t, etcd, "metadata.annotations[restore.gardener-etcd.io/source-prefix]")
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: druidv1alpha1.StatefulSetName(etcd)}, &appsv1.StatefulSet{})
	NewWithT(t).Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no StatefulSet: %v", err)
}

func sidecarArgs(g Gomega, sts *appsv1.StatefulSet) []string {
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name == etcdpod.ContainerBackupRestore {
			return c.Args
		}
	}
	g.Expect("no backup-restore container").To(BeEmpty())
	return nil
}
