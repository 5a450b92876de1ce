package etcd

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestSpecReconcileWanted(t *testing.T) {
	etcd := func(generation int64, observed *int64, annotations map[string]string) *druidv1alpha1.Etcd {
		return &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Generation: generation, Annotations: annotations},
			Status: druidv1alpha1.EtcdStatus{ObservedGeneration: observed}}
	}
	gardenerOp := map[string]string{"gardener.cloud/operation": "reconcile"}
	druidOp := map[string]string{"druid.gardener.cloud/operation": "reconcile"}
	otherOp := map[string]string{"gardener.cloud/operation": "migrate"}
	for name, tc := range map[string]struct {
		etcd *druidv1alpha1.Etcd
		auto bool
		want bool
	}{
		"never reconciled, auto off":        {etcd: etcd(1, nil, nil), want: true},
		"reconciled, unchanged, auto off":   {etcd: etcd(1, ptr.To(int64(1)), nil)},
		"spec changed, auto off":            {etcd: etcd(2, ptr.To(int64(1)), nil)},
		"spec changed, gardener annotation": {etcd: etcd(2, ptr.To(int64(1)), gardenerOp), want: true},
		"unchanged, druid annotation":       {etcd: etcd(1, ptr.To(int64(1)), druidOp), want: true},
		"other operation value":             {etcd: etcd(2, ptr.To(int64(1)), otherOp)},
		"spec changed, auto on":             {etcd: etcd(2, ptr.To(int64(1)), nil), auto: true, want: true},
		"reconciled, unchanged, auto on":    {etcd: etcd(2, ptr.To(int64(2)), nil), auto: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, _ := SpecReconcileWanted(tc.etcd, tc.auto)
			NewWithT(t).Expect(got).To(Equal(tc.want))
		})
	}
}

func TestReferencedSecrets(t *testing.T) {
	g := NewWithT(t)
	e := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"}}
	e.Spec.Etcd.ClientUrlTLS = &druidv1alpha1.TLSConfig{
		TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: ref("ca-etcd", ""), DataKey: ptr.To("bundle.crt")},
		ServerTLSSecretRef: ref("etcd-server", ""),
		ClientTLSSecretRef: ref("etcd-client", ""),
	}
	e.Spec.Etcd.PeerUrlTLS = &druidv1alpha1.PeerTLSConfig{TLSConfig: druidv1alpha1.TLSConfig{
		TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: ref("ca-etcd-peer", "")},
		ServerTLSSecretRef: ref("etcd-peer-server", ""),
	}}
	e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderLocal), SecretRef: ptr.To(ref("backup", "garden"))}
	e.Spec.Etcd.AuthSecretRef = ptr.To(ref("etcd-auth", ""))

	reqs := ReferencedSecrets(e)
	byField := map[string]SecretRequirement{}
	for _, r := range reqs {
		byField[r.Field] = r
	}
	g.Expect(byField).To(HaveLen(7))
	g.Expect(byField["spec.etcd.clientUrlTls.tlsCASecretRef"].Keys).To(Equal([]string{"bundle.crt"}))
	g.Expect(byField["spec.etcd.peerUrlTls.tlsCASecretRef"].Keys).To(Equal([]string{"ca.crt"}), "CA data key defaults to ca.crt")
	g.Expect(byField["spec.etcd.clientUrlTls.serverTLSSecretRef"].Keys).To(Equal([]string{"tls.crt", "tls.key"}))
	g.Expect(byField["spec.backup.store.secretRef"].Key()).To(Equal("garden/backup"))
	g.Expect(byField["spec.backup.store.secretRef"].Keys).To(Equal([]string{"hostPath"}))
	g.Expect(byField["spec.etcd.authSecretRef"].Key()).To(Equal("shoot/etcd-auth"))
	g.Expect(ReferencedSecretKeys(e)).To(ContainElements("shoot/ca-etcd", "garden/backup"))
}
