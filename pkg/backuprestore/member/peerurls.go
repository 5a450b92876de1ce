package member

import (
	"context"
	"fmt"
	"net/url"
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

// Ensure updates the member's peer URLs to desired when the cluster has different ones, and reports
// whether it switched. listening are the listen-peer-urls the running etcd was started with: etcd builds
// its peer listeners only when it starts, so it is restarted (and waited for until it answers again with
// the new URLs) only when they do not serve desired (see ListenersServe). A member whose pod already
// started it with the https listener and the peer certificates needs no restart: etcd keeps its own peer
// URLs only for the others to dial, which they do with the update.
func (p *PeerURLSwitch) Ensure(ctx context.Context, desired, listening []string) (bool, error) {
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
	if ListenersServe(listening, desired) {
		log.Info("Peer URLs updated; etcd already listens on them", "listening", listening)
		return true, nil
	}
	log.Info("Restarting etcd so that it listens on the updated peer URLs", "listening", listening)
	if err := p.Restarter.RestartEtcd(ctx); err != nil {
		return true, fmt.Errorf("peer URLs of member %s updated, restarting etcd: %w", local.Member.Name, err)
	}
	if err := p.waitBack(ctx, local.Member.ID, desired); err != nil {
		return true, err
	}
	log.Info("Member serves again with the updated peer URLs")
	return true, nil
}

// ListenersServe tells whether etcd listening on listening (listen-peer-urls, e.g. https://0.0.0.0:2380)
// accepts connections to every URL of advertised: a listener of the same scheme on the same port. The
// hosts are not compared; a listen URL names an interface, an advertised one a name of the pod.
func ListenersServe(listening, advertised []string) bool {
	if len(advertised) == 0 {
		return false
	}
	for _, a := range advertised {
		au, err := url.Parse(a)
		if err != nil {
			return false
		}
		if !slices.ContainsFunc(listening, func(l string) bool {
			lu, err := url.Parse(l)
			return err == nil && lu.Scheme == au.Scheme && lu.Port() == au.Port()
		}) {
			return false
		}
	}
	return true
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
