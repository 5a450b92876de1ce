package copybackupstask

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// A task stored before podLabels were validated may still name part-of=<etcd>: the copy pod carries
// managed-by=etcd-druid, so with it the pod would match that Etcd's member selector (PDB, client Service).
func TestCopyPodNeverMatchesAMemberSelector(t *testing.T) {
	task := &druidv1alpha1.EtcdCopyBackupsTask{ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: "shoot"}}
	task.Spec.SourceStore = druidv1alpha1.StoreSpec{Prefix: "source", Provider: ptr.To(druidv1alpha1.StorageProviderS3), Container: ptr.To("old")}
	task.Spec.TargetStore = druidv1alpha1.StoreSpec{Prefix: "target", Provider: ptr.To(druidv1alpha1.StorageProviderS3), Container: ptr.To("new")}
	task.Spec.PodLabels = map[string]string{druidv1alpha1.LabelPartOfKey: "etcd-main", "networking.gardener.cloud/to-dns": "allowed"}

	labels := newJob(task, "img", localStores{}).Spec.Template.Labels
	if labels[druidv1alpha1.LabelManagedByKey] == druidv1alpha1.LabelManagedByValue && labels[druidv1alpha1.LabelPartOfKey] != "" {
		t.Errorf("the copy pod matches the member selector of Etcd %s: %v", labels[druidv1alpha1.LabelPartOfKey], labels)
	}
	if labels["networking.gardener.cloud/to-dns"] != "allowed" {
		t.Errorf("the copy pod lost the user's labels: %v", labels)
	}
}
