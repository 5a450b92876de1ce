package node

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/hostsfile"
)

// statusDebounce coalesces the status changes of one moment (several containers starting) into one write.
const statusDebounce = 50 * time.Millisecond

// statusLoop writes the pod status whenever it was marked dirty, and periodically, until ctx ends.
func (w *podWorker) statusLoop(ctx context.Context) {
	resync := time.NewTicker(statusResync)
	defer resync.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.statusDirty:
		case <-resync.C:
		}
		if !sleepCtx(ctx, statusDebounce) {
			return
		}
		if err := w.syncStatus(ctx); err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
			w.log.Error(err, "Updating pod status failed")
			w.markDirty()
			sleepCtx(ctx, time.Second)
		}
	}
}

func (w *podWorker) syncStatus(ctx context.Context) error {
	pods := w.n.cfg.Client.CoreV1().Pods(w.pod.Namespace)
	for attempt := 0; ; attempt++ {
		pod, err := pods.Get(ctx, w.pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.UID != w.pod.UID {
			return nil
		}
		status := w.computeStatus(pod)
		// Hosts files first: who sees the pod Ready in the API must be able to resolve it.
		if err := w.n.cfg.Hosts.SetStatus(pod.UID, hostsfile.Status{Ready: isReady(status),
			Terminating: pod.DeletionTimestamp != nil, Labels: pod.Labels}); err != nil {
			return fmt.Errorf("publishing the pod in the hosts files: %w", err)
		}
		if sameJSON(status, pod.Status) {
			return nil
		}
		pod.Status = status
		_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) || attempt == 3 {
			return err
		}
	}
}

// isReady reports the Ready condition of a status.
func isReady(s corev1.PodStatus) bool {
	for _, c := range s.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// computeStatus derives phase, conditions and container statuses from the runners.
func (w *podWorker) computeStatus(pod *corev1.Pod) corev1.PodStatus {
	status := *pod.Status.DeepCopy()
	hostIP := w.n.cfg.Network.Gateway.String()
	status.HostIP, status.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	if ip := w.podIP(); ip != "" {
		status.PodIP, status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	}
	start := w.startTime
	status.StartTime = &start

	w.mu.Lock()
	initialized, sandboxErr := w.initialized, w.sandboxErr
	inits, containers := append([]*containerRunner(nil), w.inits...), append([]*containerRunner(nil), w.containers...)
	hasNet := w.net != nil
	w.mu.Unlock()

	status.InitContainerStatuses = statuses(pod.Spec.InitContainers, inits, "PodInitializing", sandboxErr)
	status.ContainerStatuses = statuses(pod.Spec.Containers, containers, "PodInitializing", sandboxErr)
	allReady := len(containers) == len(pod.Spec.Containers)
	for _, cs := range status.ContainerStatuses {
		allReady = allReady && cs.Ready
	}
	status.Phase = phase(pod, initialized, inits, containers)
	status.Message, status.Reason = "", ""
	if sandboxErr != "" {
		status.Message = sandboxErr
	}
	status.Conditions = conditions(pod.Status.Conditions, map[corev1.PodConditionType]bool{
		corev1.PodReadyToStartContainers: hasNet,
		corev1.PodInitialized:            initialized,
		corev1.ContainersReady:           allReady,
		corev1.PodReady:                  allReady,
		corev1.PodScheduled:              true,
	})
	return status
}

func statuses(specs []corev1.Container, runners []*containerRunner, waitingReason, message string) []corev1.ContainerStatus {
	out := make([]corev1.ContainerStatus, 0, len(specs))
	for i, c := range specs {
		if i < len(runners) {
			out = append(out, runners[i].snapshot())
			continue
		}
		out = append(out, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptrFalse(),
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waitingReason, Message: message}}})
	}
	return out
}

func phase(_ *corev1.Pod, initialized bool, inits, containers []*containerRunner) corev1.PodPhase {
	for _, r := range inits {
		if finished(r) && !r.succeeded() {
			return corev1.PodFailed
		}
	}
	if !initialized || len(containers) == 0 {
		return corev1.PodPending
	}
	done, failed, active := 0, 0, 0
	for _, r := range containers {
		cs := r.snapshot()
		switch {
		case finished(r):
			done++
			if !r.succeeded() {
				failed++
			}
		case cs.State.Running != nil || cs.RestartCount > 0 || cs.State.Terminated != nil:
			active++
		}
	}
	switch {
	case done == len(containers) && failed == 0:
		return corev1.PodSucceeded
	case done == len(containers):
		return corev1.PodFailed
	case active > 0 || done > 0:
		return corev1.PodRunning
	}
	return corev1.PodPending
}

// finished reports a container that will not run again (its runner returned without being stopped).
func finished(r *containerRunner) bool {
	select {
	case <-r.done:
		return !r.isStopping()
	default:
		return false
	}
}

// conditions sets each condition, keeping the transition time of those whose status did not change.
func conditions(old []corev1.PodCondition, want map[corev1.PodConditionType]bool) []corev1.PodCondition {
	now := metav1.Now()
	var out []corev1.PodCondition
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized,
		corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		s := corev1.ConditionFalse
		if want[t] {
			s = corev1.ConditionTrue
		}
		c := corev1.PodCondition{Type: t, Status: s, LastTransitionTime: now}
		for _, o := range old {
			if o.Type == t && o.Status == s {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		out = append(out, c)
	}
	return out
}

// sameJSON compares statuses as the apiserver stores them (times at second precision), so an unchanged
// status is not rewritten.
func sameJSON(a, b corev1.PodStatus) bool {
	x, errX := json.Marshal(a)
	y, errY := json.Marshal(b)
	return errX == nil && errY == nil && bytes.Equal(x, y)
}
