// Package charts_test applies the rendered charts to a real apiserver: every object must pass the
// apiserver's strict validation (field types, RBAC rules, webhook configurations incl. CEL match conditions).
package charts_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/charts"
	"github.com/gardener-etcd/gardener-etcd/pkg/chartrender"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Main(m, &env) }

const caPEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

// TestRenderedChartsApply creates the objects of both charts, with defaults and with a values variant, each
// in its own namespace and under its own release name so cluster-scoped names do not collide.
func TestRenderedChartsApply(t *testing.T) {
	for _, tc := range []struct {
		chart, release string
		values         map[string]any
	}{
		{charts.EtcdDruid, "etcd-druid", map[string]any{"webhooks": map[string]any{"caBundle": caPEM}}},
		{charts.EtcdDruid, "druid-variant", map[string]any{"replicas": 2, "webhooks": map[string]any{"enabled": false},
			"controllers": map[string]any{"etcd": map[string]any{"enableEtcdSpecAutoReconcile": true}}}},
		{charts.ExtensionBackup, "gardener-extension-backup", map[string]any{"webhooks": map[string]any{"caBundle": caPEM},
			"ensureETCD": map[string]any{"main": map[string]any{"storageClass": "fast", "storageCapacity": "25Gi"}}}},
		{charts.ExtensionBackup, "backup-variant", map[string]any{"providerTypes": []any{"s3"}, "webhooks": map[string]any{"enabled": false}, "replicas": 1,
			"leaderElection": map[string]any{"enabled": false}}},
	} {
		t.Run(tc.release, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.release}}
			g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
			objs, err := chartrender.RenderEmbedded(tc.chart, chartrender.Release{Name: tc.release, Namespace: tc.release}, tc.values)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(objs).NotTo(BeEmpty())
			if tc.release == "druid-variant" || tc.release == "backup-variant" {
				// Webhook configurations are cluster-scoped with fixed names; the default releases own them.
				for _, o := range objs {
					g.Expect(o.GetKind()).NotTo(HaveSuffix("WebhookConfiguration"))
				}
			}
			for _, obj := range objs {
				g.Expect(env.Client.Create(ctx, obj, client.FieldOwner("chart-test"), client.FieldValidation("Strict"))).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
			}
		})
	}
}
