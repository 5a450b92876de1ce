package main

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/wrapper"
)

func TestAcceptsTheArgumentsDruidGenerates(t *testing.T) {
	plain := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "ns"}}
	tls := plain.DeepCopy()
	tls.Spec.Etcd.ClientUrlTLS = &druidv1alpha1.TLSConfig{
		TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca"}},
		ServerTLSSecretRef: corev1.SecretReference{Name: "server"},
		ClientTLSSecretRef: corev1.SecretReference{Name: "client"},
	}
	tls.Spec.Backup.TLS = tls.Spec.Etcd.ClientUrlTLS.DeepCopy()
	for _, e := range []*druidv1alpha1.Etcd{plain, tls} {
		druidv1alpha1.SetDefaults(e)
		g := NewWithT(t)
		var got wrapper.Options
		cmd := newStartEtcdCommand(func(_ context.Context, o wrapper.Options, _ logr.Logger) error {
			got = o
			return o.Validate()
		})
		args := statefulset.EtcdWrapperArgs(e)
		g.Expect(args[0]).To(Equal("start-etcd"))
		cmd.SetArgs(args[1:])
		g.Expect(cmd.ExecuteContext(t.Context())).To(Succeed())
		g.Expect(got.BackupRestoreHostPort).To(Equal("etcd-main-local:8080"))
		g.Expect(got.EtcdServerName).To(Equal("etcd-main-local"))
		g.Expect(got.WrapperPort).To(Equal(9095))
		if e == tls {
			g.Expect(got.BackupRestoreTLSEnabled).To(BeTrue())
			g.Expect(got.BackupRestoreCACertBundlePath).To(Equal("/var/etcdbr/ssl/ca/ca.crt"))
			g.Expect(got.EtcdClientCertPath).To(Equal("/var/etcd/ssl/client/tls.crt"))
			g.Expect(got.EtcdClientKeyPath).To(Equal("/var/etcd/ssl/client/tls.key"))
		} else {
			g.Expect(got.BackupRestoreTLSEnabled).To(BeFalse())
			g.Expect(got.EtcdClientCertPath).To(BeEmpty())
		}
	}
}
