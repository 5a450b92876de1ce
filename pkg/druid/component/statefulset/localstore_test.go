package statefulset

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// An Etcd whose Local container climbs out of the allowed host directory (which an object stored before
// validation refused it can still carry) gets no StatefulSet: the sync fails naming the field instead of
// mounting another node directory read-write into the sidecar.
func TestSyncRefusesALocalContainerOutsideTheHostDirectory(t *testing.T) {
	for _, container := range []string{"../../var/lib/kubelet", "..", "a/b", "/abs", "."} {
		t.Run(container, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			c := fake.NewClientBuilder().Build()
			op := New(component.Clients{Client: c, Live: c}, config.Images{EtcdWrapper: "e", BackupRestore: "b"}, config.LocalBackup{})
			etcd := newEtcd(func(e *druidv1alpha1.Etcd) {
				e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderLocal), Container: ptr.To(container), Prefix: "etcd-main"}
			})

			err := op.Sync(ctx, etcd)
			g.Expect(err).To(MatchError(ContainSubstring("spec.backup.store.container")))
			getErr := c.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.StatefulSetName(etcd)}, &appsv1.StatefulSet{})
			g.Expect(apierrors.IsNotFound(getErr)).To(BeTrue(), "a StatefulSet was written: %v", getErr)
		})
	}
}

// An allowed container is the directory of that name below the host directory: the pods mount the
// allowed directory and select the container by subPath (storeaccess.LocalStoreVolume).
func TestSyncMountsALocalContainerBelowTheHostDirectory(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	op := New(component.Clients{Client: c, Live: c}, config.Images{EtcdWrapper: "e", BackupRestore: "b"}, config.LocalBackup{})
	etcd := newEtcd(func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProvider("local")), Container: ptr.To("backups-eu"), Prefix: "etcd-main"}
	})

	g.Expect(op.Sync(ctx, etcd)).To(Succeed())
	sts := readStatefulSet(ctx, g, c, etcd)
	var hostPaths []string
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.HostPath != nil {
			hostPaths = append(hostPaths, v.HostPath.Path)
		}
	}
	g.Expect(hostPaths).To(ConsistOf(config.DefaultLocalBackupHostPath))
	var subPaths []string
	for _, c := range sts.Spec.Template.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if m.Name == volumeLocalStore {
				subPaths = append(subPaths, m.SubPath)
			}
		}
	}
	g.Expect(subPaths).To(ConsistOf("backups-eu"))
}
