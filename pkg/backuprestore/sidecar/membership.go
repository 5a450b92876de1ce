package sidecar

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
)

// membershipLoop runs after each configuration served to etcd: once the local member answers, it promotes
// it if it is a learner and switches its peer URLs to the served ones.
func membershipLoop(ctx context.Context, served *servedConfig, cli *clientv3.Client, endpoint string, sw *member.PeerURLSwitch, interval time.Duration, log logr.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-served.notify:
		}
		cfg := served.Last()
		local, err := waitForLocalMember(ctx, cli, endpoint, interval)
		if err != nil {
			return // ctx ended
		}
		err = nil
		if local.Member.IsLearner {
			err = member.PromoteLearner(ctx, cli, local.Member.ID, interval, log)
		}
		if err == nil {
			_, err = sw.Ensure(ctx, cfg.Member.PeerURLs)
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

// retryDelay paces retries of a failed promotion or peer URL switch.
const retryDelay = 10 * time.Second

func waitForLocalMember(ctx context.Context, cli *clientv3.Client, endpoint string, interval time.Duration) (*member.Local, error) {
	for {
		reqCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		local, err := member.LocalMember(reqCtx, cli, endpoint)
		cancel()
		if err == nil {
			return local, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(interval):
		}
	}
}
