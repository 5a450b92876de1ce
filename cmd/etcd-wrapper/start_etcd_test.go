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
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
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
		args := statefulset.EtcdWrapperArgs(e, imagecaps.AllOurs)
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

// Upstream etcd-druid (internal/component/statefulset, builder.go) renders these arguments for the
// etcd container with backup TLS and client TLS: --etcd-client-port is reported as ignored, the rest
// reach their settings.
func TestAcceptsTheArgumentsUpstreamDruidRenders(t *testing.T) {
	g := NewWithT(t)
	var got wrapper.Options
	cmd := newStartEtcdCommand(func(_ context.Context, o wrapper.Options, _ logr.Logger) error {
		got = o
		return o.Validate()
	})
	cmd.SetArgs([]string{
		"--backup-restore-host-port=etcd-main-local:8080",
		"--etcd-server-name=etcd-main-local",
		"--backup-restore-tls-enabled=true",
		"--backup-restore-ca-cert-bundle-path=/var/etcdbr/ssl/ca/ca.crt",
		"--etcd-client-cert-path=/var/etcd/ssl/client/tls.crt",
		"--etcd-client-key-path=/var/etcd/ssl/client/tls.key",
		"--etcd-client-port=2379",
		"--etcd-wrapper-port=9095",
	})
	g.Expect(cmd.ExecuteContext(t.Context())).To(Succeed())
	g.Expect(got.BackupRestoreHostPort).To(Equal("etcd-main-local:8080"))
	g.Expect(got.BackupRestoreTLSEnabled).To(BeTrue())
	g.Expect(got.EtcdClientCertPath).To(Equal("/var/etcd/ssl/client/tls.crt"))
	g.Expect(got.WrapperPort).To(Equal(9095))
	ignored := got.IgnoredFlags()
	g.Expect(ignored).To(HaveLen(1))
	g.Expect(ignored[0].Name + "=" + ignored[0].Value).To(Equal("etcd-client-port=2379"))
	g.Expect(ignored[0].Why).NotTo(BeEmpty())
}
