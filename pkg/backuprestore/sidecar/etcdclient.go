package sidecar

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberdial"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
)

// clientTLS is the TLS configuration for etcd's client URLs (nil with --insecure-transport). The
// initializer and defragmentation open connections of their own to other members with it.
func (o *Options) clientTLS() (*tls.Config, error) {
	if o.InsecureTransport {
		return nil, nil
	}
	info := transport.TLSInfo{TrustedCAFile: o.CACert, CertFile: o.Cert, KeyFile: o.Key}
	c, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("TLS for etcd: %w", err)
	}
	c.InsecureSkipVerify = o.InsecureSkipVerify //nolint:gosec // only on request (--insecure-skip-tls-verify), as the upstream sidecar does
	return c, nil
}

// etcdClient connects to the local member (--endpoints) with the sidecar's client certificate unless
// --insecure-transport. It does not block: etcd may not run yet when the sidecar starts.
func (o *Options) etcdClient(tlsConfig *tls.Config) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: o.Endpoints, TLS: tlsConfig, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
}

// deltaWatchClient is the delta watch's own connection to the local member, which gathers its reads
// (snapshotter.WatchDialOptions); like etcdClient it does not block.
func (o *Options) deltaWatchClient(tlsConfig *tls.Config) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: o.Endpoints, TLS: tlsConfig, DialTimeout: 5 * time.Second,
		DialOptions: snapshotter.WatchDialOptions(), Logger: zap.NewNop()})
}

// memberDialPatience is how long the cluster client holds back a member whose lease was never renewed
// (memberdial.Gate): twice the DNS cache time of Gardener's seeds.
const memberDialPatience = time.Minute

// clusterClient reaches the other members: their advertised client URLs from the template, else the
// client service (--service-endpoints), else the local member (a single-member cluster has no other).
// While the template names an existing cluster the Etcd joins, --service-endpoints (which then carry the
// source cluster's client endpoints) are always added: the first members that join are promoted through
// the source cluster, before any other member of the Etcd serves.
// With ran set (the members whose leases were ever renewed), a member is dialed only once it has run
// (memberdial.Gate): before, its pod may have no address, and asking the DNS for its name would hold it
// back.
func (o *Options) clusterClient(templatePath string, own []string, tlsConfig *tls.Config, ran func(context.Context, []string) ([]string, error)) (*clientv3.Client, error) {
	var others []string
	var dialOptions []grpc.DialOption
	if t, err := memberconfig.LoadTemplate(templatePath); err == nil {
		if ran != nil {
			gate := &memberdial.Gate{Members: memberconfig.MembersByClientAddress(t), Ran: ran, Recheck: o.HeartbeatDuration,
				Since: time.Now(), Patience: memberDialPatience}
			dialOptions = append(dialOptions, grpc.WithContextDialer(gate.DialContext))
		}
		for _, u := range t.AllClientURLs() {
			if !slices.Contains(own, u) && !slices.Contains(o.Endpoints, u) {
				others = append(others, u)
			}
		}
		if existing, err := t.ExistingCluster(); err == nil && len(existing) > 0 && len(others) > 0 {
			others = append(others, o.ServiceEndpoints...)
		}
	}
	if len(others) == 0 {
		others = o.ServiceEndpoints
	}
	if len(others) == 0 {
		others = o.Endpoints
	}
	return clientv3.New(clientv3.Config{Endpoints: others, TLS: tlsConfig, DialTimeout: 5 * time.Second, DialOptions: dialOptions, Logger: zap.NewNop()})
}

// etcdHealthy is the sidecar's /healthz: the local member answers its status.
func etcdHealthy(cli *clientv3.Client, endpoint string) func(context.Context) bool {
	return func(ctx context.Context) bool {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		_, err := cli.Status(ctx, endpoint)
		return err == nil
	}
}
