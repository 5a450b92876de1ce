package secretref

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

func tlsConfig(prefix string) *druidv1alpha1.TLSConfig {
	return &druidv1alpha1.TLSConfig{
		TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: prefix + "-ca"}},
		ServerTLSSecretRef: corev1.SecretReference{Name: prefix + "-server"},
		ClientTLSSecretRef: corev1.SecretReference{Name: prefix + "-client"},
	}
}

func fullEtcd() *druidv1alpha1.Etcd {
	return &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"},
		Spec: druidv1alpha1.EtcdSpec{
			Etcd: druidv1alpha1.EtcdConfig{
				ClientUrlTLS:  tlsConfig("client"),
				PeerUrlTLS:    &druidv1alpha1.PeerTLSConfig{TLSConfig: *tlsConfig("peer")},
				AuthSecretRef: &corev1.SecretReference{Name: "auth", Namespace: "other"},
			},
			Backup: druidv1alpha1.BackupSpec{
				TLS: tlsConfig("backup"),
				Store: &druidv1alpha1.StoreSpec{
					Prefix:    "p",
					Provider:  ptr.To(druidv1alpha1.StorageProviderLocal),
					SecretRef: &corev1.SecretReference{Name: "etcd-backup"},
				},
			},
		},
	}
}

func TestOfListsEveryReferenceWithFieldAndKeys(t *testing.T) {
	g := NewWithT(t)
	etcd := fullEtcd()
	etcd.Spec.Etcd.ClientUrlTLS.TLSCASecretRef.DataKey = ptr.To("bundle.crt")

	g.Expect(Of(etcd)).To(Equal([]Reference{
		{Namespace: "shoot", Name: "client-ca", Field: "spec.etcd.clientUrlTls.tlsCASecretRef", Required: backupsecret.Keys("bundle.crt")},
		{Namespace: "shoot", Name: "client-server", Field: "spec.etcd.clientUrlTls.serverTLSSecretRef", Required: backupsecret.Keys("tls.crt", "tls.key")},
		{Namespace: "shoot", Name: "client-client", Field: "spec.etcd.clientUrlTls.clientTLSSecretRef", Required: backupsecret.Keys("tls.crt", "tls.key")},
		{Namespace: "shoot", Name: "peer-ca", Field: "spec.etcd.peerUrlTls.tlsCASecretRef", Required: backupsecret.Keys("ca.crt")},
		{Namespace: "shoot", Name: "peer-server", Field: "spec.etcd.peerUrlTls.serverTLSSecretRef", Required: backupsecret.Keys("tls.crt", "tls.key")},
		{Namespace: "shoot", Name: "peer-client", Field: "spec.etcd.peerUrlTls.clientTLSSecretRef", Required: backupsecret.Keys("tls.crt", "tls.key")},
		{Namespace: "shoot", Name: "backup-ca", Field: "spec.backup.tls.tlsCASecretRef", Required: backupsecret.Keys("ca.crt")},
		{Namespace: "shoot", Name: "backup-server", Field: "spec.backup.tls.serverTLSSecretRef", Required: backupsecret.Keys("tls.crt", "tls.key")},
		{Namespace: "shoot", Name: "backup-client", Field: "spec.backup.tls.clientTLSSecretRef", Required: backupsecret.Keys("tls.crt", "tls.key")},
		// Local's hostPath has a default, and Local's container too: nothing is required.
		{Namespace: "shoot", Name: "etcd-backup", Field: "spec.backup.store.secretRef", Provider: druidv1alpha1.StorageProviderLocal},
		{Namespace: "other", Name: "auth", Field: "spec.etcd.authSecretRef"},
	}))
}

func TestOfSkipsUnsetReferences(t *testing.T) {
	g := NewWithT(t)
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}}
	g.Expect(Of(etcd)).To(BeEmpty())

	// A store without secret, a client TLS config without client certificate.
	etcd.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderS3)}
	etcd.Spec.Etcd.ClientUrlTLS = tlsConfig("c")
	etcd.Spec.Etcd.ClientUrlTLS.ClientTLSSecretRef = corev1.SecretReference{}
	g.Expect(Keys(etcd)).To(Equal([]string{"ns/c-ca", "ns/c-server"}))

	// The S3 backup secret must hold static keys or a role and token, the region, and bucketName as long as
	// the store names no container.
	etcd.Spec.Backup.Store.SecretRef = &corev1.SecretReference{Name: "b"}
	g.Expect(Of(etcd)).To(ContainElement(Reference{Namespace: "ns", Name: "b", Field: "spec.backup.store.secretRef", Provider: druidv1alpha1.StorageProviderS3,
		Required: append([]backupsecret.Requirement{backupsecret.OneOf([]string{"accessKeyID", "secretAccessKey"}, []string{"roleARN", "token"})},
			backupsecret.Keys("region", "bucketName")...)}))
	etcd.Spec.Backup.Store.Container = ptr.To("bucket")
	etcd.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProviderAlicloud)
	g.Expect(Of(etcd)).To(ContainElement(Reference{Namespace: "ns", Name: "b", Field: "spec.backup.store.secretRef", Provider: druidv1alpha1.StorageProviderOSS,
		Required: backupsecret.Keys("storageEndpoint", "accessKeyID", "accessKeySecret")}))
}

func TestKeysAreSortedAndDistinct(t *testing.T) {
	g := NewWithT(t)
	etcd := fullEtcd()
	// Client and peer TLS share one CA secret, the auth secret lives in the Etcd's namespace.
	etcd.Spec.Etcd.PeerUrlTLS.TLSCASecretRef.Name = "client-ca"
	etcd.Spec.Etcd.AuthSecretRef.Namespace = ""

	g.Expect(Keys(etcd)).To(Equal([]string{
		"shoot/auth", "shoot/backup-ca", "shoot/backup-client", "shoot/backup-server",
		"shoot/client-ca", "shoot/client-client", "shoot/client-server", "shoot/etcd-backup",
		"shoot/peer-client", "shoot/peer-server",
	}))
}

func TestIndexValuesFollowWhetherTheEtcdHoldsItsSecrets(t *testing.T) {
	now := metav1.Now()
	cases := []struct {
		name       string
		deleting   bool
		finalizers []string
		holds      bool
	}{
		{name: "live Etcd", holds: true},
		{name: "live Etcd with druid finalizer", finalizers: []string{druidv1alpha1.FinalizerName}, holds: true},
		{name: "being deleted, druid finalizer still present", deleting: true, finalizers: []string{druidv1alpha1.FinalizerName}, holds: true},
		{name: "being deleted, only a foreign finalizer left", deleting: true, finalizers: []string{"example.org/keep"}, holds: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			etcd := fullEtcd()
			etcd.Finalizers = tc.finalizers
			if tc.deleting {
				etcd.DeletionTimestamp = &now
			}
			g.Expect(HoldsSecrets(etcd)).To(Equal(tc.holds))
			if tc.holds {
				g.Expect(IndexValues(etcd)).To(Equal(Keys(etcd)))
			} else {
				g.Expect(IndexValues(etcd)).To(BeEmpty())
			}
		})
	}
	NewWithT(t).Expect(IndexValues(&corev1.Secret{})).To(BeEmpty(), "not an Etcd")
}
