package copybackupstask

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
)

// `etcdbrctl copy` only lists and fetches the source (pkg/backuprestore/copier), so the Job mounts a Local
// source read-only: a copy, whatever goes wrong in it, cannot change the backups it copies from.
func TestCopyJobMountsALocalSourceReadOnly(t *testing.T) {
	task := &druidv1alpha1.EtcdCopyBackupsTask{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main-copy", Namespace: "shoot"}}
	task.Spec.SourceStore = druidv1alpha1.StoreSpec{Prefix: "etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderLocal), Container: ptr.To("old")}
	task.Spec.TargetStore = druidv1alpha1.StoreSpec{Prefix: "etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderLocal), Container: ptr.To("new")}
	var locals localStores
	var err error
	if locals.target, err = storeaccess.ResolveLocalStore(context.Background(), nil, &task.Spec.TargetStore, "spec.targetStore.container", "shoot", volumeTargetLocal, config.LocalBackup{}); err != nil {
		t.Fatal(err)
	}
	if locals.source, err = storeaccess.ResolveLocalStore(context.Background(), nil, &task.Spec.SourceStore, "spec.sourceStore.container", "shoot", volumeSourceLocal, config.LocalBackup{}); err != nil {
		t.Fatal(err)
	}
	job := newJob(task, "etcdbrctl:test", locals)
	readOnly := map[string]bool{}
	for _, m := range job.Spec.Template.Spec.Containers[0].VolumeMounts {
		readOnly[m.Name] = m.ReadOnly
	}
	if ro, ok := readOnly[volumeSourceLocal]; !ok || !ro {
		t.Errorf("source store mount %s: present %v, read-only %v; want a read-only mount", volumeSourceLocal, ok, ro)
	}
	if ro, ok := readOnly[volumeTargetLocal]; !ok || ro {
		t.Errorf("target store mount %s: present %v, read-only %v; want a writable mount", volumeTargetLocal, ok, ro)
	}
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.HostPath != nil && (v.HostPath.Path != config.DefaultLocalBackupHostPath || v.HostPath.Type == nil || *v.HostPath.Type != corev1.HostPathDirectoryOrCreate) {
			t.Errorf("volume %s mounts %+v; want the allowed directory %s", v.Name, v.HostPath, config.DefaultLocalBackupHostPath)
		}
	}
}
