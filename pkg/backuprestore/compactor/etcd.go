package compactor

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// The private etcd's identity. It is never part of a real cluster: the peer URL is only recorded in
// the restored membership, nothing listens for peers beyond the loopback port etcd itself picks.
const (
	memberName         = "compactor"
	clusterToken       = "etcdbrctl-compact"
	placeholderPeerURL = "http://127.0.0.1:2380"
	readyTimeout       = 2 * time.Minute
)

type privateEtcd struct {
	etcd     *embed.Etcd
	endpoint string
}

// startPrivateEtcd runs the restored member on loopback ports the kernel assigns (port 0), so nothing
// can race us for them and two compactions on one node do not collide.
func startPrivateEtcd(ctx context.Context, dataDir string, quota int64, log logr.Logger) (*privateEtcd, error) {
	loopback := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg := embed.NewConfig()
	cfg.Name = memberName
	cfg.Dir = dataDir
	cfg.InitialClusterToken = clusterToken
	cfg.InitialCluster = memberName + "=" + placeholderPeerURL
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{loopback}, []url.URL{loopback}
	cfg.ListenPeerUrls = []url.URL{loopback}
	peer, _ := url.Parse(placeholderPeerURL)
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.QuotaBackendBytes = quota
	cfg.AutoCompactionRetention = "0"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting the private etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("private etcd failed while starting: %w", err)
	case <-time.After(readyTimeout):
		e.Close()
		return nil, fmt.Errorf("private etcd not ready after %s", readyTimeout)
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
	endpoint := "http://" + e.Clients[0].Addr().String()
	log.Info("Private etcd ready", "endpoint", endpoint)
	return &privateEtcd{etcd: e, endpoint: endpoint}, nil
}

func (p *privateEtcd) client() (*clientv3.Client, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{p.endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("client of the private etcd: %w", err)
	}
	return cli, nil
}

func (p *privateEtcd) stop() { p.etcd.Close() }

// isCompacted tells whether a compaction failed only because the revision was compacted already.
func isCompacted(err error) bool {
	return errors.Is(err, rpctypes.ErrCompacted) || strings.Contains(err.Error(), rpctypes.ErrCompacted.Error())
}
