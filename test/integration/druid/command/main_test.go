// Package command runs the etcd-druid command itself (cmd/etcd-druid/app) in-process against envtest:
// flags, kubeconfig loading, manager, controllers, webhooks, health probes and the graceful shutdown.
package command

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/etcdvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var env *envtest.Env

// TestMain registers druid's webhook configurations with the apiserver; envtest points them at its local
// serving host and port and generates the serving certificate the command is given.
func TestMain(m *testing.M) {
	service := admissionregistrationv1.ServiceReference{Name: "etcd-druid", Namespace: "garden"}
	envtest.MainWith(m, &env, envtest.Options{Webhooks: ctrlenvtest.WebhookInstallOptions{
		ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{
			etcdvalidation.WebhookConfiguration(service, nil),
			protection.WebhookConfiguration(service, nil, protection.DefaultPodControllerUsers),
		},
	}}, nil)
}
