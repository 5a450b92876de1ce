package storeaccess

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// GCS secrets are mounted where Gardener's workload-identity configuration expects its token; the
// credentials variable names serviceaccount.json in that directory.
func TestSecretMountPath(t *testing.T) {
	for _, tc := range []struct {
		provider druidv1alpha1.StorageProvider
		source   bool
		want     string
		env      string
	}{
		{"gcp", false, "/var/.gcp", "/var/.gcp/serviceaccount.json"},
		{"GCS", true, "/var/.source-gcp", "/var/.source-gcp/serviceaccount.json"},
		{"aws", false, "/var/etcd-backup", "/var/etcd-backup"},
		{"S3", true, "/var/source-etcd-backup", "/var/source-etcd-backup"},
	} {
		store := &druidv1alpha1.StoreSpec{Provider: ptr.To(tc.provider), SecretRef: ptr.To(corev1SecretRef("s"))}
		got := SecretMountPath(store, tc.source)
		if got != tc.want {
			t.Errorf("%s source=%v: %s, want %s", tc.provider, tc.source, got, tc.want)
		}
		if env := StoreCredentialsEnv(store, got, ""); len(env) != 1 || env[0].Value != tc.env {
			t.Errorf("%s source=%v: env %v, want %s", tc.provider, tc.source, env, tc.env)
		}
	}
}

func corev1SecretRef(name string) corev1.SecretReference { return corev1.SecretReference{Name: name} }
