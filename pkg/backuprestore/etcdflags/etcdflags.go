// Package etcdflags binds the flags with which etcdbrctl reaches a running etcd (--endpoints, --cacert,
// --cert, --key, --insecure-transport, --insecure-skip-tls-verify, --etcd-connection-timeout) and builds
// the client from them, so that `server` and `snapshot` accept exactly the same arguments druid renders
// for the sidecar.
package etcdflags

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Client is the bound configuration of an etcd client.
type Client struct {
	Endpoints          []string
	CACert, Cert, Key  string
	InsecureTransport  bool
	InsecureSkipVerify bool
	DialTimeout        time.Duration
}

// Bind registers the client flags on fs with the upstream sidecar's defaults.
func Bind(fs *pflag.FlagSet) *Client {
	c := &Client{}
	fs.StringSliceVar(&c.Endpoints, "endpoints", []string{"127.0.0.1:2379"}, "etcd client endpoints")
	fs.StringVar(&c.CACert, "cacert", "", "CA bundle verifying etcd's server certificate")
	fs.StringVar(&c.Cert, "cert", "", "client certificate presented to etcd")
	fs.StringVar(&c.Key, "key", "", "key of the client certificate")
	fs.BoolVar(&c.InsecureTransport, "insecure-transport", true, "talk plain HTTP to etcd (false: TLS)")
	fs.BoolVar(&c.InsecureSkipVerify, "insecure-skip-tls-verify", false, "do not verify etcd's server certificate")
	fs.DurationVar(&c.DialTimeout, "etcd-connection-timeout", 30*time.Second, "timeout of connecting to etcd")
	return c
}

// New opens a client. With TLS, the CA (if given) verifies the server and the client certificate (if
// given) authenticates us; a certificate without its key, or the reverse, is an error.
func (c *Client) New() (*clientv3.Client, error) {
	if len(c.Endpoints) == 0 {
		return nil, errors.New("--endpoints is required")
	}
	cfg := clientv3.Config{Endpoints: c.Endpoints, DialTimeout: c.DialTimeout, Logger: zap.NewNop()}
	if !c.InsecureTransport {
		tc, err := c.tlsConfig()
		if err != nil {
			return nil, err
		}
		cfg.TLS = tc
	}
	return clientv3.New(cfg)
}

func (c *Client) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.InsecureSkipVerify} //nolint:gosec // explicit operator choice
	if c.CACert != "" {
		pem, err := os.ReadFile(c.CACert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s holds no PEM certificate", c.CACert)
		}
		tc.RootCAs = pool
	}
	if (c.Cert == "") != (c.Key == "") {
		return nil, errors.New("--cert and --key must be given together")
	}
	if c.Cert != "" {
		pair, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}
