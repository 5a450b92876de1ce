package druid

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/charts"
	"github.com/gardener-etcd/gardener-etcd/pkg/waitreason"
)

// Wait polls until every druid CRD is Established and the Deployment is rolled out and Available. On timeout
// the error says what was still missing, so a failed bootstrap is diagnosable from its message alone.
func (b *bootstrap) Wait(ctx context.Context) error {
	last, err := waitreason.Poll(ctx, b.values.WaitInterval, b.values.WaitTimeout, b.notReady)
	if errors.Is(err, waitreason.ErrNotDone) {
		return fmt.Errorf("etcd-druid in %s not ready after %s: %s", b.namespace, b.values.WaitTimeout.Round(time.Second), last)
	}
	return err
}

// notReady returns why the bootstrap is not ready yet, or "" when it is.
func (b *bootstrap) notReady(ctx context.Context) (string, error) {
	crds, err := charts.CRDs(charts.EtcdDruid)
	if err != nil {
		return "", err
	}
	for _, want := range crds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := b.client.Get(ctx, client.ObjectKey{Name: want.Name}, crd); err != nil {
			return "", err
		}
		if !crdEstablished(crd) {
			return fmt.Sprintf("CRD %s is not established", crd.Name), nil
		}
	}
	deploy := &appsv1.Deployment{}
	if err := b.client.Get(ctx, client.ObjectKey{Namespace: b.namespace, Name: Name}, deploy); err != nil {
		return "", err
	}
	return deploymentNotReady(deploy), nil
}

func crdEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// deploymentNotReady judges a Deployment as `kubectl rollout status` does: the controller observed the
// current generation, every replica is updated, and the Available condition is true.
func deploymentNotReady(d *appsv1.Deployment) string {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	switch {
	case d.Status.ObservedGeneration < d.Generation:
		return fmt.Sprintf("deployment %s: generation %d not observed yet (observed %d)", d.Name, d.Generation, d.Status.ObservedGeneration)
	case d.Status.UpdatedReplicas < want:
		return fmt.Sprintf("deployment %s: %d of %d replicas updated", d.Name, d.Status.UpdatedReplicas, want)
	case d.Status.Replicas > d.Status.UpdatedReplicas:
		return fmt.Sprintf("deployment %s: %d old replicas pending termination", d.Name, d.Status.Replicas-d.Status.UpdatedReplicas)
	case d.Status.AvailableReplicas < want:
		return fmt.Sprintf("deployment %s: %d of %d replicas available", d.Name, d.Status.AvailableReplicas, want)
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status != corev1.ConditionTrue {
			return fmt.Sprintf("deployment %s: not available: %s", d.Name, c.Message)
		}
	}
	return ""
}
