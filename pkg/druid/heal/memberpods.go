package heal

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// listMemberPods reads the pods with the Etcd's member labels from reader and returns the members, by
// name: those the StatefulSet sts controls and uncontrolled pods named as members (health.MemberPods);
// the others are logged and left alone.
func listMemberPods(ctx context.Context, reader client.Reader, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet) (map[string]*corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := reader.List(ctx, pods, client.InNamespace(etcd.Namespace), client.MatchingLabels(druidv1alpha1.ManagedLabels(etcd))); err != nil {
		return nil, fmt.Errorf("listing member pods: %w", err)
	}
	members, strangers := health.MemberPods(pods.Items, etcd, sts)
	if len(strangers) > 0 {
		log.FromContext(ctx).Info("Ignoring pods with the member labels that another controller than the Etcd's StatefulSet controls, or that are not named as members", "pods", strangers)
	}
	return members, nil
}
