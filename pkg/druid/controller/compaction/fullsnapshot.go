package compaction

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// ErrNoClientCertificate says that druid has no certificate to call the sidecar with: the sidecar serves
// /snapshot/full only to loopback callers and to clients presenting a certificate of the backup-restore
// CA, so without spec.backup.tls.clientTLSSecretRef druid cannot ask for a full snapshot.
var ErrNoClientCertificate = errors.New("spec.backup.tls.clientTLSSecretRef is not set, so druid cannot call the sidecar's /snapshot/full")

// FullSnapshotter asks the backup leader of an Etcd for a full snapshot and returns once it is stored.
type FullSnapshotter interface {
	FullSnapshot(ctx context.Context, etcd *druidv1alpha1.Etcd) error
}

// fullSnapshotRequestMargin is added to spec.backup.etcdSnapshotTimeout for the request: the sidecar
// answers only after the upload, and a cancelled request cancels the snapshot.
const fullSnapshotRequestMargin = time.Minute

// HTTPFullSnapshotter calls `GET /snapshot/full` on the client Service's backup port, as the deployed druid
// does when triggerFullSnapshotThreshold is reached. A follower's sidecar forwards the call to the backup
// leader. It presents the client certificate of spec.backup.tls (clientTLSSecretRef, keys tls.crt/tls.key)
// and trusts the CA of tlsCASecretRef; druid's Secrets are read from the apiserver, not a cache.
type HTTPFullSnapshotter struct {
	// Reader reads the TLS Secrets.
	Reader client.Reader
	// Endpoint is the scheme, host and port to call for an Etcd; nil means
	// https://<name>-client.<namespace>.svc:<spec.backup.port>. Tests point it at a local server.
	Endpoint func(etcd *druidv1alpha1.Etcd) string
}

// FullSnapshot implements FullSnapshotter. The Etcd must be defaulted (druidv1alpha1.SetDefaults).
func (h *HTTPFullSnapshotter) FullSnapshot(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	backupTLS := etcd.Spec.Backup.TLS
	if backupTLS == nil || backupTLS.ClientTLSSecretRef.Name == "" {
		return ErrNoClientCertificate
	}
	tlsConfig, err := h.tlsConfig(ctx, etcd.Namespace, backupTLS)
	if err != nil {
		return err
	}
	endpoint := fmt.Sprintf("https://%s.%s.svc:%d", etcd.ClientServiceName(), etcd.Namespace, ptr.Deref(etcd.Spec.Backup.Port, etcdpod.DefaultBackupPort))
	if h.Endpoint != nil {
		endpoint = h.Endpoint(etcd)
	}
	timeout := druidv1alpha1.DefaultEtcdSnapshotTimeout
	if etcd.Spec.Backup.EtcdSnapshotTimeout != nil {
		timeout = etcd.Spec.Backup.EtcdSnapshotTimeout.Duration
	}
	httpClient := &http.Client{
		Timeout:   timeout + fullSnapshotRequestMargin,
		Transport: &http.Transport{TLSClientConfig: tlsConfig},
	}
	defer httpClient.CloseIdleConnections()
	url := endpoint + "/snapshot/full"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("requesting a full snapshot: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("requesting a full snapshot: GET %s answered %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// tlsConfig trusts the backup CA and presents the client certificate.
func (h *HTTPFullSnapshotter) tlsConfig(ctx context.Context, namespace string, backupTLS *druidv1alpha1.TLSConfig) (*tls.Config, error) {
	caRef := backupTLS.TLSCASecretRef
	caSecret, err := h.secret(ctx, namespace, caRef.SecretReference)
	if err != nil {
		return nil, err
	}
	caKey := ptr.Deref(caRef.DataKey, druidv1alpha1.DefaultCADataKey)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caSecret.Data[caKey]) {
		return nil, fmt.Errorf("secret %s/%s: key %q holds no PEM certificate", caSecret.Namespace, caSecret.Name, caKey)
	}
	clientSecret, err := h.secret(ctx, namespace, backupTLS.ClientTLSSecretRef)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(clientSecret.Data[etcdpod.TLSCertKey], clientSecret.Data[etcdpod.TLSKeyKey])
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", clientSecret.Namespace, clientSecret.Name, err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// secret reads a referenced Secret; an empty namespace is the Etcd's.
func (h *HTTPFullSnapshotter) secret(ctx context.Context, namespace string, ref corev1.SecretReference) (*corev1.Secret, error) {
	if ref.Namespace != "" {
		namespace = ref.Namespace
	}
	secret := &corev1.Secret{}
	if err := h.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, secret); err != nil {
		return nil, fmt.Errorf("reading secret %s/%s: %w", namespace, ref.Name, err)
	}
	return secret, nil
}
