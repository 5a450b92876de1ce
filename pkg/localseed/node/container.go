package node

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/proc"
)

// backoffReset: a container that ran this long before crashing starts over with the initial back-off.
const backoffReset = 10 * time.Minute

// containerRunner runs one container of a pod: start, probes, restarts with exponential back-off per the
// pod's restart policy, and the container status the pod status is built from.
type containerRunner struct {
	w    *podWorker
	c    corev1.Container
	init bool
	log  logr.Logger

	mu        sync.Mutex
	status    corev1.ContainerStatus
	current   *proc.Process
	env       []string
	exitedOK  bool
	stopGrace time.Duration

	stopping chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

func newContainerRunner(w *podWorker, c corev1.Container, init bool) *containerRunner {
	return &containerRunner{
		w: w, c: c, init: init, log: w.log.WithValues("container", c.Name),
		status: corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
		stopping: make(chan struct{}),
		done:     make(chan struct{}),
	}
}

// stop terminates the container (SIGTERM, grace, SIGKILL) and waits until its runner has finished.
func (r *containerRunner) stop(grace time.Duration) {
	r.mu.Lock()
	r.stopGrace = grace
	r.mu.Unlock()
	r.stopOnce.Do(func() { close(r.stopping) })
	<-r.done
}

func (r *containerRunner) succeeded() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exitedOK
}

func (r *containerRunner) snapshot() corev1.ContainerStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return *r.status.DeepCopy()
}

func (r *containerRunner) run(ctx context.Context) {
	defer close(r.done)
	initial, maxBackoff := r.w.n.cfg.RestartBackoff, r.w.n.cfg.MaxRestartBackoff
	backoff := initial
	for {
		p, reason, message := r.start(ctx)
		if p == nil {
			r.setWaiting(reason, message)
			if !r.pause(backoff) {
				return
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		code := r.supervise(ctx, p)
		if r.isStopping() {
			return
		}
		if !r.shouldRestart(code) {
			r.mu.Lock()
			r.exitedOK = code == 0
			r.mu.Unlock()
			return
		}
		if p.Finished.Sub(p.Started) > backoffReset {
			backoff = initial
		}
		r.mu.Lock()
		r.status.LastTerminationState = r.status.State
		r.status.RestartCount++
		r.mu.Unlock()
		r.setWaiting("CrashLoopBackOff", "back-off "+backoff.String()+" restarting failed container "+r.c.Name)
		r.log.Info("Container exited, restarting after back-off", "exitCode", code, "backoff", backoff.String())
		if !r.pause(backoff) {
			return
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// supervise runs probes while p lives, stops it on request and records its termination.
func (r *containerRunner) supervise(ctx context.Context, p *proc.Process) int {
	r.setRunning(p)
	probeCtx, cancel := context.WithCancel(ctx)
	go r.probe(probeCtx, p)
	select {
	case <-p.Exited():
	case <-r.stopping:
		r.mu.Lock()
		grace := r.stopGrace
		r.mu.Unlock()
		if err := p.Stop(grace); err != nil {
			r.log.Info("Container did not stop within its grace period", "grace", grace.String())
		}
	}
	cancel()
	code := p.ExitCode()
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	r.mu.Lock()
	r.status.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: int32(code), Reason: reason, ContainerID: r.status.ContainerID,
		StartedAt: metav1.NewTime(p.Started), FinishedAt: metav1.NewTime(p.Finished)}}
	r.status.Ready = false
	r.status.Started = ptrFalse()
	r.current = nil
	r.mu.Unlock()
	r.w.markDirty()
	return code
}

func (r *containerRunner) shouldRestart(code int) bool {
	switch r.w.current().Spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return code != 0
	}
	return !r.init || code != 0
}

func (r *containerRunner) isStopping() bool {
	select {
	case <-r.stopping:
		return true
	default:
		return false
	}
}

// pause waits d; false when the container is being stopped meanwhile.
func (r *containerRunner) pause(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-r.stopping:
		return false
	}
}

func (r *containerRunner) setWaiting(reason, message string) {
	r.mu.Lock()
	r.status.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
	r.status.Ready = false
	r.mu.Unlock()
	r.w.markDirty()
}

func (r *containerRunner) setRunning(p *proc.Process) {
	r.mu.Lock()
	r.current = p
	r.status.ContainerID = containerID(p)
	r.status.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(p.Started)}}
	r.status.Ready = false
	r.status.Started = ptrFalse()
	r.mu.Unlock()
	r.w.markDirty()
}

func (r *containerRunner) setReady(ready bool) {
	r.mu.Lock()
	changed := r.status.Ready != ready && r.status.State.Running != nil
	if changed {
		r.status.Ready = ready
	}
	r.mu.Unlock()
	if changed {
		r.log.V(1).Info("Container readiness changed", "ready", ready)
		r.w.markDirty()
	}
}

func (r *containerRunner) setStarted() {
	r.mu.Lock()
	t := true
	r.status.Started = &t
	r.mu.Unlock()
	r.w.markDirty()
}

func ptrFalse() *bool { f := false; return &f }

func containerID(p *proc.Process) string { return "localseed://" + strconv.Itoa(p.Pid()) }
