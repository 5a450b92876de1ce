package member

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
)

// EtcdRestarter restarts the local etcd process so that it starts again from its data dir and the
// served configuration. The pod implementation is WrapperRestarter.
type EtcdRestarter interface {
	RestartEtcd(ctx context.Context) error
}

// PeerURLSwitch makes the cluster's peer URLs of the local member those of its configuration (see the
// package documentation for the sequence and why one in-place restart suffices).
type PeerURLSwitch struct {
	Client *clientv3.Client
	// LocalEndpoint is the local member's client URL.
	LocalEndpoint string
	Restarter     EtcdRestarter
	// PollInterval is how often the switch checks that the member is back after the restart; 0 means 1s.
	PollInterval time.Duration
	Log          logr.Logger
}

// Ensure updates the member's peer URLs to desired when the cluster has different ones, restarts etcd
// and waits until the member answers again with the new URLs. It reports whether it switched.
func (p *PeerURLSwitch) Ensure(ctx context.Context, desired []string) (bool, error) {
	local, err := LocalMember(ctx, p.Client, p.LocalEndpoint)
	if err != nil {
		return false, err
	}
	current := local.Member.PeerURLs
	if memberconfig.SameURLs(current, desired) {
		return false, nil
	}
	log := p.Log.WithValues("member", local.Member.Name, "memberID", fmt.Sprintf("%x", local.Member.ID))
	log.Info("Updating the member's peer URLs", "from", current, "to", desired)
	if _, err := p.Client.MemberUpdate(ctx, local.Member.ID, desired); err != nil {
		return false, fmt.Errorf("updating peer URLs of member %s from %v to %v: %w", local.Member.Name, current, desired, err)
	}
	log.Info("Restarting etcd so that it runs with the updated peer URLs")
	if err := p.Restarter.RestartEtcd(ctx); err != nil {
		return true, fmt.Errorf("peer URLs of member %s updated, restarting etcd: %w", local.Member.Name, err)
	}
	if err := p.waitBack(ctx, local.Member.ID, desired); err != nil {
		return true, err
	}
	log.Info("Member serves again with the updated peer URLs")
	return true, nil
}

// waitBack polls until the local endpoint answers as the same member with the desired peer URLs.
func (p *PeerURLSwitch) waitBack(ctx context.Context, id uint64, desired []string) error {
	interval := p.PollInterval
	if interval == 0 {
		interval = time.Second
	}
	var last error
	for {
		local, err := LocalMember(ctx, p.Client, p.LocalEndpoint)
		switch {
		case err != nil:
			last = err
		case local.Member.ID != id:
			return fmt.Errorf("after the restart %s is member %x, not %x", p.LocalEndpoint, local.Member.ID, id)
		case slices.Equal(sortedCopy(local.Member.PeerURLs), sortedCopy(desired)):
			return nil
		default:
			last = fmt.Errorf("peer URLs are %v", local.Member.PeerURLs)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the member to serve after the restart: %w (last: %v)", ctx.Err(), last)
		case <-time.After(interval):
		}
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
