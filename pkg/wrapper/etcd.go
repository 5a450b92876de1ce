package wrapper

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// loadConfig loads the sidecar's YAML with etcd's own loader, so that every key means exactly what it
// means for the etcd binary.
func loadConfig(config []byte) (*embed.Config, error) {
	dir, err := os.MkdirTemp("", "etcd-wrapper-config-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "etcd.conf.yaml")
	if err := os.WriteFile(path, config, 0o600); err != nil {
		return nil, err
	}
	cfg, err := embed.ConfigFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading the configuration served by the sidecar: %w", err)
	}
	return cfg, nil
}

// startEtcd starts embedded etcd with the loaded configuration.
func startEtcd(cfg *embed.Config, logger *zap.Logger) (*embed.Etcd, error) {
	if logger != nil {
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(logger)
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting etcd: %w", err)
	}
	return e, nil
}

// localClient reaches the etcd of this process through its first client listener on the loopback address,
// with TLS (etcd's trusted CA, the wrapper's client certificate, --etcd-server-name) when that listener
// serves https.
func localClient(cfg *embed.Config, o Options) (*clientv3.Client, error) {
	endpoint, tlsConfig, err := localEndpoint(cfg, o)
	if err != nil {
		return nil, err
	}
	return clientv3.New(clientv3.Config{
		Endpoints: []string{endpoint.String()}, TLS: tlsConfig,
		DialTimeout: 2 * time.Second, Logger: zap.NewNop(),
	})
}

// localEndpoint is etcd's first client listener on the loopback address, with the TLS configuration that
// reaches it (nil for http).
func localEndpoint(cfg *embed.Config, o Options) (url.URL, *tls.Config, error) {
	if len(cfg.ListenClientUrls) == 0 {
		return url.URL{}, nil, fmt.Errorf("etcd listens on no client URL")
	}
	u := cfg.ListenClientUrls[0]
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return url.URL{}, nil, fmt.Errorf("client URL %s: %w", u.String(), err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	endpoint := url.URL{Scheme: u.Scheme, Host: net.JoinHostPort(host, port)}
	if u.Scheme != "https" {
		return endpoint, nil, nil
	}
	info := transport.TLSInfo{
		TrustedCAFile: cfg.ClientTLSInfo.TrustedCAFile,
		CertFile:      o.EtcdClientCertPath,
		KeyFile:       o.EtcdClientKeyPath,
		ServerName:    o.EtcdServerName,
	}
	tlsConfig, err := info.ClientConfig()
	if err != nil {
		return url.URL{}, nil, fmt.Errorf("TLS for the local client: %w", err)
	}
	return endpoint, tlsConfig, nil
}

// serves tells whether etcd answers a serializable read, which also a learner and a member without a
// leader answer — readiness is about this member serving, liveness of the cluster is druid's concern.
func serves(ctx context.Context, cli *clientv3.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := cli.Get(ctx, "/etcd-wrapper/readiness", clientv3.WithSerializable(), clientv3.WithCountOnly())
	return err
}
