package sidecar

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
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
	return c, nil
}

// etcdClient connects to the local member (--endpoints) with the sidecar's client certificate unless
// --insecure-transport. It does not block: etcd may not run yet when the sidecar starts.
func (o *Options) etcdClient(tlsConfig *tls.Config) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: o.Endpoints, TLS: tlsConfig, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
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
