package localseed

import (
	"context"
	"errors"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/proc"
)

// apiserverComponent names the kube-apiserver among the control-plane components and its log file.
const apiserverComponent = "kube-apiserver"

// StopAPIServer stops the kube-apiserver, as a control-plane outage: every client of the seed (kubelets,
// druid, the sidecars renewing their leases) gets connection refused until StartAPIServer. The cluster's
// state stays in the seed's etcd, and running pods keep running. An apiserver still draining its watches
// after the grace period is killed: an outage need not be graceful, and it is over either way. Stopping a
// stopped apiserver does nothing.
func (s *Seed) StopAPIServer() error {
	s.componentsMu.Lock()
	defer s.componentsMu.Unlock()
	c, err := s.apiserver()
	if err != nil {
		return err
	}
	// Stop's only error is that it had to kill the process, which is gone then.
	_ = c.p.Stop(componentStopGrace)
	return nil
}

// StartAPIServer starts the kube-apiserver again after StopAPIServer, with the same flags, address and
// certificates, and returns once it answers /readyz. Starting a running apiserver does nothing.
func (s *Seed) StartAPIServer(ctx context.Context) error {
	s.componentsMu.Lock()
	defer s.componentsMu.Unlock()
	c, err := s.apiserver()
	if err != nil {
		return err
	}
	if c.p.Running() {
		return nil
	}
	p, err := proc.Start(c.spec)
	if err != nil {
		return err
	}
	// In place: the control plane still stops in reverse start order.
	c.p = p
	return waitReady(ctx, apiserverComponent, p, s.cp.logPath(apiserverComponent), c.ready)
}

// apiserver is the kube-apiserver's entry of the control plane (componentsMu held).
func (s *Seed) apiserver() (*component, error) {
	if s.cp == nil || s.stopped {
		return nil, errors.New("the local seed is not running")
	}
	for i := range s.cp.components {
		if s.cp.components[i].name == apiserverComponent {
			return &s.cp.components[i], nil
		}
	}
	return nil, errors.New("the local seed's control plane has no kube-apiserver")
}
