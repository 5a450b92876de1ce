package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
)

// recoveryReasons are druid's event reasons that say it acted on (or refused to act on) a broken member or
// cluster; startedReasons are those that started a recovery (a pod deleted, a quorum-loss recovery).
var (
	recoveryReasons = []string{heal.EventReasonMemberPodDeleted, heal.EventReasonQuorumLossRecovery,
		heal.EventReasonLeaseRenewalSuspected, heal.EventReasonManualInterventionRequired}
	startedReasons = []string{heal.EventReasonMemberPodDeleted, heal.EventReasonQuorumLossRecovery}
)

// podState is what a round compares before and after: each pod's incarnation and its containers' restart
// counts.
type podState struct {
	uid      types.UID
	restarts map[string]int32
}

// snapshotPods records the incarnations and restart counts of the member and druid pods.
func (s *Suite) snapshotPods(ctx context.Context) (map[string]podState, error) {
	out := map[string]podState{}
	for _, list := range []func(context.Context) (map[string]*corev1.Pod, error){s.memberPods, s.druidPods} {
		pods, err := list(ctx)
		if err != nil {
			return nil, err
		}
		for name, p := range pods {
			st := podState{uid: p.UID, restarts: map[string]int32{}}
			for _, cs := range p.Status.ContainerStatuses {
				st.restarts[cs.Name] = cs.RestartCount
			}
			out[name] = st
		}
	}
	return out, nil
}

// podChanges describes what the kubelets and the controllers did between two snapshots: container
// restarts ("etcd-main-1/etcd restarted ×1") and pods that are new incarnations ("etcd-main-1 recreated").
// Druid's pods get new names when recreated; a name that appears is counted as recreated too.
func podChanges(before, after map[string]podState) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(after)) {
		a := after[name]
		b, ok := before[name]
		if !ok || b.uid != a.uid {
			out = append(out, name+" recreated")
			continue
		}
		for _, c := range slices.Sorted(maps.Keys(a.restarts)) {
			if n := a.restarts[c] - b.restarts[c]; n > 0 {
				out = append(out, fmt.Sprintf("%s/%s restarted ×%d", name, c, n))
			}
		}
	}
	return out
}

// druidEvent is one of druid's events about etcd-main.
type druidEvent struct {
	Reason, Action, Message string
	Count                   int32
}

// druidEvents are druid's recovery events in the suite's namespace observed at or after since.
func (s *Suite) druidEvents(ctx context.Context, since time.Time) ([]druidEvent, error) {
	list := &corev1.EventList{}
	if err := s.Env.Client.List(ctx, list, client.InNamespace(s.Env.Namespace)); err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	var out []druidEvent
	for _, e := range list.Items {
		if !slices.Contains(recoveryReasons, e.Reason) || lastSeen(&e).Before(since) {
			continue
		}
		count := e.Count
		if e.Series != nil {
			count = e.Series.Count
		}
		out = append(out, druidEvent{Reason: e.Reason, Action: e.Action, Message: e.Message, Count: max(count, 1)})
	}
	return out, nil
}

// lastSeen is when an event was last observed, whichever API wrote it.
func lastSeen(e *corev1.Event) time.Time {
	t := e.CreationTimestamp.Time
	for _, c := range []time.Time{e.EventTime.Time, e.LastTimestamp.Time} {
		if c.After(t) {
			t = c
		}
	}
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	return t
}

// describeEvents is "QuorumLossRecovery/ScaleToZero ×1, …".
func describeEvents(events []druidEvent) []string {
	var out []string
	for _, e := range events {
		what := e.Reason
		if e.Action != "" {
			what += "/" + e.Action
		}
		out = append(out, fmt.Sprintf("%s ×%d", what, e.Count))
	}
	return out
}

// recoveryStarted are the events of druid starting a recovery, described.
func recoveryStarted(events []druidEvent) string {
	var started []string
	for _, e := range events {
		if slices.Contains(startedReasons, e.Reason) {
			started = append(started, fmt.Sprintf("%s/%s: %s", e.Reason, e.Action, e.Message))
		}
	}
	return strings.Join(started, "; ")
}

// recoveryCondition describes druid's QuorumLossRecovery condition when it changed at or after since
// ("" otherwise): a recovery run or one held back shows there even when its events were folded.
func (s *Suite) recoveryCondition(ctx context.Context, since time.Time) (string, error) {
	obj := &druidv1alpha1.Etcd{}
	if err := s.Env.Client.Get(ctx, client.ObjectKey{Namespace: s.Env.Namespace, Name: etcd.Name(etcd.RoleMain)}, obj); err != nil {
		return "", err
	}
	c := druidv1alpha1.FindCondition(obj.Status.Conditions, heal.ConditionTypeQuorumLossRecovery)
	if c == nil || c.LastTransitionTime.Before(&metav1.Time{Time: since}) {
		return "", nil
	}
	return fmt.Sprintf("condition QuorumLossRecovery=%s/%s", c.Status, c.Reason), nil
}
