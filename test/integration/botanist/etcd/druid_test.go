package etcd_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// reconcileAsDruid does what druid does after a successful spec reconcile of an Etcd that asks for one:
// it writes the status for the current generation (healthy members, conditions, ready) and only then removes
// the operation annotation. Etcds without the annotation are left alone, as druid with auto-reconcile off does.
func reconcileAsDruid(ctx context.Context, key client.ObjectKey) error {
	obj := &druidv1alpha1.Etcd{}
	if err := env.Client.Get(ctx, key, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if _, ok := obj.Annotations[druidv1alpha1.GardenerOperationAnnotation]; !ok || obj.DeletionTimestamp != nil {
		return nil
	}
	now := metav1.Now()
	condition := func(t druidv1alpha1.ConditionType, reason string) druidv1alpha1.Condition {
		return druidv1alpha1.Condition{Type: t, Status: druidv1alpha1.ConditionTrue, Reason: reason, LastTransitionTime: now, LastUpdateTime: now}
	}
	s := &obj.Status
	s.ObservedGeneration = ptr.To(obj.Generation)
	s.LastErrors = nil
	s.Replicas, s.CurrentReplicas, s.ReadyReplicas = obj.Spec.Replicas, obj.Spec.Replicas, obj.Spec.Replicas
	s.Ready = ptr.To(true)
	s.Conditions = []druidv1alpha1.Condition{
		condition(druidv1alpha1.ConditionTypeReady, druidv1alpha1.ReasonQuorate),
		condition(druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ReasonAllMembersReady),
		condition(druidv1alpha1.ConditionTypeAllMembersUpdated, druidv1alpha1.ReasonAllMembersUpdated),
	}
	if obj.Spec.Backup.Store != nil {
		s.Conditions = append(s.Conditions, condition(druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ReasonBackupSucceeded))
	}
	s.Members = nil
	for i := range int(obj.Spec.Replicas) {
		role := druidv1alpha1.EtcdRoleMember
		if i == 0 {
			role = druidv1alpha1.EtcdRoleLeader
		}
		s.Members = append(s.Members, druidv1alpha1.EtcdMemberStatus{Name: druidv1alpha1.PodName(obj, i), Role: &role, Status: druidv1alpha1.EtcdMemberStatusReady, LastTransitionTime: now})
	}
	if err := env.Client.Status().Update(ctx, obj); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	patch := client.MergeFromWithOptions(obj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	delete(obj.Annotations, druidv1alpha1.GardenerOperationAnnotation)
	return env.Client.Patch(ctx, obj, patch)
}

// runDruid plays druid for every Etcd of the namespace until the test ends. Conflicts with the component's
// own writes are expected and simply retried on the next tick, as druid's requeue would.
func runDruid(t *testing.T, namespace string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		ticker := time.NewTicker(50 * time.Millisecond)
		defer ticker.Stop()
		for {
			list := &druidv1alpha1.EtcdList{}
			if err := env.Client.List(ctx, list, client.InNamespace(namespace)); err == nil {
				for _, e := range list.Items {
					_ = reconcileAsDruid(ctx, client.ObjectKeyFromObject(&e))
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
}
