package localseed

import (
	"context"
	"errors"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/seednet"
)

// AddCallerNamespace adds a network namespace `<prefix>-<id>` on the seed's bridge, like a node's but
// running nothing: a test's stand-in for another pod, whose connections reach the pods from an address of
// the pod network instead of the host's loopback (test/support/podnettest.FromNamespace dials from it). Each node's
// pod range is routed through that node, as the nodes route each other's: the host does not forward
// between the bridge's members. Stop removes the namespace with the seed's others; RemoveCallerNamespace
// removes it earlier.
func (s *Seed) AddCallerNamespace(ctx context.Context, id string) (*seednet.Namespace, error) {
	if s.network == nil || s.stopped {
		return nil, errors.New("the local seed is not running")
	}
	ns, err := s.network.AddNamespace(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, n := range s.nodes {
		if err := s.network.RouteInNamespace(ctx, ns, n.podCIDR, n.netns.IP); err != nil {
			return nil, errors.Join(err, s.network.RemoveNamespace(context.WithoutCancel(ctx), ns))
		}
	}
	return ns, nil
}

// RemoveCallerNamespace removes a namespace of AddCallerNamespace.
func (s *Seed) RemoveCallerNamespace(ctx context.Context, ns *seednet.Namespace) error {
	if s.network == nil {
		return errors.New("the local seed is not running")
	}
	return s.network.RemoveNamespace(ctx, ns)
}
