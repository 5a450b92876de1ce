package sidecar

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
)

// promoteTimeout bounds one promotion attempt; the loop tries again after retryDelay.
const promoteTimeout = 2 * time.Minute

// membershipLoop runs after each successful initialization: it promotes the member if it is a learner
// and, once the local member answers, switches its peer URLs to the served ones. The promotion goes
// through clusterCli (the other members): a learner refuses membership requests itself, and etcd's client
// would retry that refusal on the only endpoint it has until its context ends. A member that joins as a
// learner (the initialization added it) is found in the others' member list by its peer URLs and promoted
// as soon as etcd accepts, without waiting for its own etcd to answer: a learner serves its clients only
// once it published itself to the cluster, which etcd may retry only after its request timeout (7 s),
// long after it caught up; a scale-up's next member waits for this promotion. metrics time the promotion.
// report (nil: none) writes what changed into the member lease right away: druid's scale-up waits for
// the tls-enabled annotation and the status for a new member's first renewal, which the heartbeat would
// only bring at its next beat.
func membershipLoop(ctx context.Context, served *servedConfig, cli, clusterCli *clientv3.Client, endpoint string, sw *member.PeerURLSwitch, metrics *member.Metrics, report func(context.Context) error, interval time.Duration, log logr.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-served.notify:
		}
		cfg := served.Last()
		if cfg == nil {
			continue // a new initialization started meanwhile; it signals again when it succeeds
		}
		var err error
		if cfg.Joining && clusterCli != nil {
			err = promoteJoiningLearner(ctx, clusterCli, cfg.Member.PeerURLs, metrics, interval, log)
		}
		if err == nil {
			var local *member.Local
			if local, err = waitForLocalMember(ctx, cli, clusterCli, endpoint, interval, log); err != nil {
				return // ctx ended
			}
			metrics.Observe(local)
			if local.Member.IsLearner {
				pctx, cancel := context.WithTimeout(ctx, promoteTimeout)
				err = metrics.PromoteLearner(pctx, clusterCli, local.Member.ID, interval, log)
				cancel()
			}
		}
		if err == nil {
			_, err = sw.Ensure(ctx, cfg.Member.PeerURLs, cfg.ListenPeerURLs())
		}
		if err == nil && report != nil {
			if rerr := report(ctx); rerr != nil && ctx.Err() == nil {
				log.Info("Reporting the membership in the member lease failed; the heartbeat reports it at its next beat", "error", rerr.Error())
			}
		}
		if err != nil && ctx.Err() == nil {
			log.Error(err, "Membership change failed; retrying", "in", retryDelay)
			select {
			case <-ctx.Done():
				return
			case <-time.After(retryDelay):
				served.signal()
			}
		}
	}
}

// promoteJoiningLearner promotes the learner with peerURLs, found in the member list of the others, once
// etcd accepts (see membershipLoop); it does nothing when that member votes already or is not listed. The
// others may not answer at once (right after a member's pod was replaced, the seed's DNS may still name
// its old address); it asks again at interval, for up to promoteTimeout, and then leaves the promotion to
// the lookup of the local member.
func promoteJoiningLearner(ctx context.Context, clusterCli *clientv3.Client, peerURLs []string, metrics *member.Metrics, interval time.Duration, log logr.Logger) error {
	pctx, cancel := context.WithTimeout(ctx, promoteTimeout)
	defer cancel()
	var list *clientv3.MemberListResponse
	for {
		lctx, lcancel := context.WithTimeout(pctx, 5*time.Second)
		var err error
		list, err = clusterCli.MemberList(lctx)
		lcancel()
		if err == nil {
			break
		}
		log.V(1).Info("The other members do not answer yet", "error", err.Error())
		select {
		case <-pctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
	for _, m := range list.Members {
		if !m.IsLearner || !memberconfig.SameURLs(m.PeerURLs, peerURLs) {
			continue
		}
		return metrics.PromoteLearner(pctx, clusterCli, m.ID, interval, log)
	}
	return nil
}

// membershipPollInterval paces the membership loop's waits: for the local member to answer after etcd
// started, and for etcd to accept a learner's promotion (it refuses until the learner caught up, a check
// of the leader's own state). Each wait costs a scale-up's members one after the other, since etcd
// admits the next learner only once this one is promoted; both requests are cheap four times a second.
const membershipPollInterval = 250 * time.Millisecond

// retryDelay paces retries of a failed promotion or peer URL switch.
const retryDelay = 10 * time.Second

// waitForLocalMember asks until the local member answers who it is. A learner answers Status but refuses
// even a serializable member list, so the list then comes from the other members (clusterCli).
func waitForLocalMember(ctx context.Context, cli, clusterCli *clientv3.Client, endpoint string, interval time.Duration, log logr.Logger) (*member.Local, error) {
	for {
		local, err := lookupLocalMember(ctx, cli, clusterCli, endpoint)
		if err == nil {
			return local, nil
		}
		log.V(1).Info("Local member does not answer yet", "error", err.Error())
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// lookupLocalMember asks once, within 5s, who the local member is: itself, or for a learner (its Status
// says so) the others. A learner is never asked for the member list: it refuses it as unavailable, which
// etcd's client retries until the context ends, so that the lookup through the others would come too late.
func lookupLocalMember(ctx context.Context, cli, clusterCli *clientv3.Client, endpoint string) (*member.Local, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	status, err := cli.Status(ctx, endpoint)
	if err != nil {
		return nil, fmt.Errorf("status of the local member at %s: %w", endpoint, err)
	}
	if status.IsLearner && clusterCli != nil {
		return learnerMember(ctx, status, clusterCli)
	}
	return member.LocalMember(ctx, cli, endpoint)
}

// learnerMember finds the local member (by the ID its Status reported) in the member list of the others.
func learnerMember(ctx context.Context, status *clientv3.StatusResponse, clusterCli *clientv3.Client) (*member.Local, error) {
	list, err := clusterCli.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing members through the other members: %w", err)
	}
	id := status.Header.MemberId
	for _, m := range list.Members {
		if m.ID == id {
			return &member.Local{Member: m, ClusterID: status.Header.ClusterId, Leader: status.Leader == id, ClusterSize: len(list.Members)}, nil
		}
	}
	return nil, fmt.Errorf("local member %x is not in the member list", id)
}
