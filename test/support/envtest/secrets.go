package envtest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SecretVersions are the resourceVersions of every Secret in the namespace, by name: tests that must show
// that a component wrote no secret (or only its own) compare them before and after.
func (e *Env) SecretVersions(t testing.TB, namespace string) map[string]string {
	t.Helper()
	list := &corev1.SecretList{}
	if err := e.Client.List(context.Background(), list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		out[s.Name] = s.ResourceVersion
	}
	return out
}
