package secretref

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestAmbientStoreProblems(t *testing.T) {
	etcd := func(provider druidv1alpha1.StorageProvider, container string, secret bool) *druidv1alpha1.Etcd {
		e := &druidv1alpha1.Etcd{}
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Provider: &provider, Container: ptr.To(container)}
		if secret {
			e.Spec.Backup.Store.SecretRef = &corev1.SecretReference{Name: "etcd-backup"}
		}
		return e
	}
	for name, tc := range map[string]struct {
		etcd *druidv1alpha1.Etcd
		want []string
	}{
		"S3 ambient":         {etcd("aws", "b", false), nil},
		"GCS ambient":        {etcd("gcp", "b", false), nil},
		"Local default path": {etcd("Local", "", false), nil},
		"ABS with secret":    {etcd("azure", "", true), nil},
		"ABS ambient": {etcd("azure", "b", false), []string{
			"spec.backup.store.secretRef is required for provider ABS: its client takes credentials only from the backup secret (only S3 and GCS can use the pod's own identity)"}},
		"S3 without container": {etcd("S3", "", false), []string{
			`spec.backup.store.container is required without spec.backup.store.secretRef: provider S3 otherwise takes the bucket from the secret's "bucketName"`}},
		"no store": {&druidv1alpha1.Etcd{}, nil},
	} {
		got := AmbientStoreProblems(tc.etcd)
		if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}
