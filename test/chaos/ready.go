package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/druid"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
	"github.com/gardener-etcd/gardener-etcd/pkg/waitreason"
)

// pollInterval is how often the suite's waits look.
const pollInterval = time.Second

// poll calls check every pollInterval until it returns "" (done), up to timeout; the error names the last
// reason.
func poll(ctx context.Context, what string, timeout time.Duration, check func(ctx context.Context) (string, error)) error {
	last, err := waitreason.Poll(ctx, pollInterval, timeout, check)
	if errors.Is(err, waitreason.ErrNotDone) {
		return fmt.Errorf("waiting for %s: not done after %s: %s", what, timeout, last)
	}
	return err
}

// etcdReady is why etcd-main is not Ready ("" when it is): every member pod Ready with every container
// ready (the kubelet's view, fresh from the apiserver), and druid reporting Ready and AllMembersReady with
// all three members Ready.
func (s *Suite) etcdReady(ctx context.Context) (string, error) {
	pods, err := s.memberPods(ctx)
	if err != nil {
		return "", err
	}
	if len(pods) != members {
		return fmt.Sprintf("%d member pods", len(pods)), nil
	}
	for _, p := range pods {
		if why := podNotReady(p); why != "" {
			return why, nil
		}
	}
	obj := &druidv1alpha1.Etcd{}
	if err := s.Env.Client.Get(ctx, client.ObjectKey{Namespace: s.Env.Namespace, Name: etcd.Name(etcd.RoleMain)}, obj); err != nil {
		return "", err
	}
	for _, t := range []druidv1alpha1.ConditionType{druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTypeAllMembersReady} {
		if c := druidv1alpha1.FindCondition(obj.Status.Conditions, t); c == nil || c.Status != druidv1alpha1.ConditionTrue {
			return fmt.Sprintf("condition %s is not True", t), nil
		}
	}
	ready := 0
	for _, m := range obj.Status.Members {
		if m.Status == druidv1alpha1.EtcdMemberStatusReady {
			ready++
		}
	}
	if ready != members {
		return fmt.Sprintf("druid reports %d of %d members Ready", ready, members), nil
	}
	return "", nil
}

// settled is etcdReady plus druid's Deployment fully available, the state every round starts from.
func (s *Suite) settled(ctx context.Context) (string, error) {
	if why, err := s.etcdReady(ctx); why != "" || err != nil {
		return why, err
	}
	d := &appsv1.Deployment{}
	if err := s.Env.Client.Get(ctx, client.ObjectKey{Namespace: seedworkflow.GardenNamespace, Name: druid.Name}, d); err != nil {
		return "", err
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if d.Status.AvailableReplicas != want || d.Status.UpdatedReplicas != want || d.Status.Replicas != want {
		return fmt.Sprintf("druid: %d of %d replicas available", d.Status.AvailableReplicas, want), nil
	}
	return "", nil
}

// waitEtcdReady waits until etcdReady and returns how long it took.
func (s *Suite) waitEtcdReady(ctx context.Context) (time.Duration, error) {
	begin := time.Now()
	err := poll(ctx, "etcd-main Ready", waitTimeout, s.etcdReady)
	return time.Since(begin), err
}

func podNotReady(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return fmt.Sprintf("pod %s is terminating", p.Name)
	}
	ready := false
	for _, c := range p.Status.Conditions {
		ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
	}
	if !ready {
		return fmt.Sprintf("pod %s is not Ready", p.Name)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if !cs.Ready {
			return fmt.Sprintf("container %s of pod %s is not ready", cs.Name, p.Name)
		}
	}
	return ""
}

// memberPods lists etcd-main's member pods, by name.
func (s *Suite) memberPods(ctx context.Context) (map[string]*corev1.Pod, error) {
	return s.pods(ctx, s.Env.Namespace, client.MatchingLabels{druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue,
		druidv1alpha1.LabelPartOfKey: etcd.Name(etcd.RoleMain)})
}

// druidPods lists druid's pods, by name.
func (s *Suite) druidPods(ctx context.Context) (map[string]*corev1.Pod, error) {
	return s.pods(ctx, seedworkflow.GardenNamespace, client.MatchingLabels{"app.kubernetes.io/name": druid.Name})
}

func (s *Suite) pods(ctx context.Context, namespace string, sel client.MatchingLabels) (map[string]*corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := s.Env.Client.List(ctx, list, client.InNamespace(namespace), sel); err != nil {
		return nil, fmt.Errorf("listing pods in %s: %w", namespace, err)
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}

// pod reads one pod.
func (s *Suite) pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	p := &corev1.Pod{}
	return p, s.Env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, p)
}
