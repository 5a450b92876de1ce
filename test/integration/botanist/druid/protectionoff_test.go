package druid_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/druid"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/etcdvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
)

// Turning the component protection off through the bootstrap (webhooks.componentProtection: false) makes
// druid stop serving the protection paths; its webhook configuration, which fails closed, must go with it,
// or every update and delete of a druid-managed object — druid's own included — is refused. The Etcd
// validation configuration stays. Turning it on again brings the configuration back.
func TestTurningComponentProtectionOffRemovesItsWebhookConfiguration(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const ns = "druid-protection-off"
	deploy := func(protectionOn bool) {
		t.Helper()
		component := druid.New(env.Client, ns, druid.Values{
			Image:       "registry.example:5000/etcd-druid:v1",
			ChartValues: map[string]any{"webhooks": map[string]any{"componentProtection": protectionOn}},
		})
		g.Expect(component.Deploy(ctx)).To(Succeed())
	}
	exists := func(name string) bool {
		err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &admissionregistrationv1.ValidatingWebhookConfiguration{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		return !apierrors.IsNotFound(err)
	}

	deploy(true)
	g.Expect(exists(protection.ConfigurationName)).To(BeTrue())

	deploy(false)
	g.Expect(exists(protection.ConfigurationName)).To(BeFalse(), "the protection configuration outlived the protection")
	g.Expect(exists(etcdvalidation.ConfigurationName)).To(BeTrue())

	deploy(false)
	g.Expect(exists(protection.ConfigurationName)).To(BeFalse())

	deploy(true)
	g.Expect(exists(protection.ConfigurationName)).To(BeTrue())
}
