// Package gardenlet runs our etcd-druid command in-process exactly as gardenlet deploys upstream druid:
// only Gardener's rendered OperatorConfiguration and IMAGEVECTOR_OVERWRITE, under an identity bound to a
// copy of Gardener's ClusterRole, behind a copy of Gardener's webhook configuration (test/support/gardenlet).
package gardenlet

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
	"github.com/gardener-etcd/gardener-etcd/test/support/gardenlet"
)

// druidNamespace is the namespace of Gardener's test expectation the configuration was copied from
// (webhooks.etcdComponentProtection.serviceAccountInfo).
const druidNamespace = "shoot--foo--bar"

var env *envtest.Env

func TestMain(m *testing.M) {
	envtest.MainWith(m, &env, envtest.Options{Webhooks: ctrlenvtest.WebhookInstallOptions{
		ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{gardenlet.WebhookConfiguration(druidNamespace)},
	}}, nil)
}
