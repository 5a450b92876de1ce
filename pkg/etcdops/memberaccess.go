package etcdops

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/secretref"
)

// MemberAccessOptions override how the member-facing commands reach an Etcd's members. Zero values take
// what the Etcd's spec says.
type MemberAccessOptions struct {
	// Endpoints are client URLs (https://host:port); empty: the Etcd's client Service.
	Endpoints []string
	// CAFile, CertFile and KeyFile are PEM files; empty: the secrets of spec.etcd.clientUrlTls, read
	// through the kube-apiserver (which then needs get on those secrets).
	CAFile, CertFile, KeyFile string
	// ServerName is the name the members' serving certificate is checked against; empty: the client
	// Service's DNS name, the one every in-cluster client of the Etcd uses.
	ServerName string
}

// MemberAccess is how to reach an Etcd's members: its client endpoints and the client TLS (nil: plain).
type MemberAccess struct {
	Endpoints []string
	TLS       *tls.Config
}

// ResolveMemberAccess works out the endpoints and client TLS of etcd from its spec and opts. The
// certificates come from the Etcd's own secrets, so that an operator needs no copy of them on disk; files
// take precedence for whoever has no read access to secrets.
func ResolveMemberAccess(ctx context.Context, c client.Reader, etcd *druidv1alpha1.Etcd, opts MemberAccessOptions) (MemberAccess, error) {
	service := fmt.Sprintf("%s.%s.svc", druidv1alpha1.ClientServiceName(etcd), etcd.Namespace)
	spec := etcd.Spec.Etcd.ClientUrlTLS
	access := MemberAccess{Endpoints: opts.Endpoints}
	if len(access.Endpoints) == 0 {
		scheme := "http"
		if spec != nil {
			scheme = "https"
		}
		port := ptr.Deref(etcd.Spec.Etcd.ClientPort, druidv1alpha1.DefaultClientPort)
		access.Endpoints = []string{fmt.Sprintf("%s://%s:%d", scheme, service, port)}
	}
	if spec == nil && opts.CAFile == "" {
		return access, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cmp.Or(opts.ServerName, service)}
	caPEM, err := pemOf(ctx, c, etcd, opts.CAFile, spec, caSource)
	if err != nil {
		return MemberAccess{}, err
	}
	cfg.RootCAs = x509.NewCertPool()
	if !cfg.RootCAs.AppendCertsFromPEM(caPEM) {
		return MemberAccess{}, errors.New("the CA bundle holds no PEM certificate")
	}
	certPEM, err := pemOf(ctx, c, etcd, opts.CertFile, spec, certSource)
	if err != nil {
		return MemberAccess{}, err
	}
	keyPEM, err := pemOf(ctx, c, etcd, opts.KeyFile, spec, keySource)
	if err != nil {
		return MemberAccess{}, err
	}
	if len(certPEM) > 0 || len(keyPEM) > 0 {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return MemberAccess{}, fmt.Errorf("client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	access.TLS = cfg
	return access, nil
}

// pemSource is one of the three PEM blocks and where spec.etcd.clientUrlTls keeps it.
type pemSource struct {
	flag  string
	ref   func(*druidv1alpha1.TLSConfig) (ref corev1.SecretReference, key, field string)
	empty bool // allowed to be absent (no client certificate)
}

var (
	caSource = pemSource{flag: "--cacert", ref: func(t *druidv1alpha1.TLSConfig) (corev1.SecretReference, string, string) {
		return t.TLSCASecretRef.SecretReference, ptr.Deref(t.TLSCASecretRef.DataKey, druidv1alpha1.DefaultCADataKey), "spec.etcd.clientUrlTls.tlsCASecretRef"
	}}
	certSource = pemSource{flag: "--cert", empty: true, ref: func(t *druidv1alpha1.TLSConfig) (corev1.SecretReference, string, string) {
		return t.ClientTLSSecretRef, secretref.TLSCertKey, "spec.etcd.clientUrlTls.clientTLSSecretRef"
	}}
	keySource = pemSource{flag: "--key", empty: true, ref: func(t *druidv1alpha1.TLSConfig) (corev1.SecretReference, string, string) {
		return t.ClientTLSSecretRef, secretref.TLSKeyKey, "spec.etcd.clientUrlTls.clientTLSSecretRef"
	}}
)

// pemOf reads file if given, else the key of the secret spec references for src.
func pemOf(ctx context.Context, c client.Reader, etcd *druidv1alpha1.Etcd, file string, spec *druidv1alpha1.TLSConfig, src pemSource) ([]byte, error) {
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", src.flag, err)
		}
		return data, nil
	}
	if spec == nil {
		if src.empty {
			return nil, nil
		}
		return nil, fmt.Errorf("%s is required: Etcd %s has no spec.etcd.clientUrlTls", src.flag, etcd.Name)
	}
	ref, key, field := src.ref(spec)
	if ref.Name == "" {
		if src.empty {
			return nil, nil
		}
		return nil, fmt.Errorf("%s names no secret; pass %s", field, src.flag)
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cmp.Or(ref.Namespace, etcd.Namespace), Name: ref.Name}, secret); err != nil {
		return nil, fmt.Errorf("reading secret %s of %s (or pass %s): %w", ref.Name, field, src.flag, err)
	}
	data, ok := secret.Data[key]
	if !ok || len(data) == 0 {
		return nil, fmt.Errorf("secret %s of %s has no key %s", ref.Name, field, key)
	}
	return data, nil
}

// memberRequestTimeout bounds dialing and each request of the member-facing commands that is not a
// defragmentation.
const memberRequestTimeout = 10 * time.Second

// Connect opens an etcd client to the members; the caller closes it.
func (a MemberAccess) Connect() (*clientv3.Client, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: a.Endpoints, TLS: a.TLS, DialTimeout: memberRequestTimeout, Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to %v: %w", a.Endpoints, err)
	}
	return cli, nil
}
