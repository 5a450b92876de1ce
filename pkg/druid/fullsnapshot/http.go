// Package fullsnapshot asks an Etcd's backup leader for a full snapshot now, through the sidecar's
// `GET /snapshot/full`. The compaction controller asks beyond triggerFullSnapshotThreshold; the Etcd
// controller asks before it hibernates a cluster or rolls new images, so that the store holds everything the
// cluster has before its members stop.
package fullsnapshot

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// ErrNoClientCertificate says that druid has no certificate to call the sidecar with: the sidecar serves
// /snapshot/full only to loopback callers and to clients presenting a certificate of the backup-restore
// CA, so without spec.backup.tls.clientTLSSecretRef druid cannot ask for a full snapshot.
var ErrNoClientCertificate = errors.New("spec.backup.tls.clientTLSSecretRef is not set, so druid cannot call the sidecar's /snapshot/full")

// Requester asks the backup leader of an Etcd for a full snapshot and returns once it is stored. The
// snapshot is described as status.lastFullSnapshot records one; it is nil when the sidecar answered 200
// without a body this druid can read (the snapshot was still taken).
type Requester interface {
	FullSnapshot(ctx context.Context, etcd *druidv1alpha1.Etcd) (*druidv1alpha1.SnapshotStatus, error)
}

// fullSnapshotRequestMargin is added to spec.backup.etcdSnapshotTimeout for the request: the sidecar
// answers only after the upload, and a cancelled request cancels the snapshot.
const fullSnapshotRequestMargin = time.Minute

// HTTP calls `GET /snapshot/full` on the client Service's backup port, as the deployed druid
// does when triggerFullSnapshotThreshold is reached. A follower's sidecar forwards the call to the backup
// leader. It presents the client certificate of spec.backup.tls (clientTLSSecretRef, keys tls.crt/tls.key)
// and trusts the CA of tlsCASecretRef; druid's Secrets are read from the apiserver, not a cache.
type HTTP struct {
	// Reader reads the TLS Secrets.
	Reader client.Reader
	// Endpoint is the scheme, host and port to call for an Etcd; nil means
	// https://<name>-client.<namespace>.svc:<spec.backup.port>. Tests point it at a local server.
	Endpoint func(etcd *druidv1alpha1.Etcd) string
}

// FullSnapshot implements Requester. The Etcd must be defaulted (druidv1alpha1.SetDefaults).
func (h *HTTP) FullSnapshot(ctx context.Context, etcd *druidv1alpha1.Etcd) (*druidv1alpha1.SnapshotStatus, error) {
	backupTLS := etcd.Spec.Backup.TLS
	if backupTLS == nil || backupTLS.ClientTLSSecretRef.Name == "" {
		return nil, ErrNoClientCertificate
	}
	tlsConfig, err := h.tlsConfig(ctx, etcd.Namespace, backupTLS)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("requesting a full snapshot: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("requesting a full snapshot: GET %s answered %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return Parse(body), nil
}

// maxAnswer bounds what is read of the sidecar's answer: a snapshot's JSON is a few hundred bytes.
const maxAnswer = 16 << 10

// Parse reads the sidecar's answer to /snapshot/full (the snapshot taken, as JSON with the field names
// both this project's and the deployed sidecar use) as status.lastFullSnapshot records a snapshot. It is
// nil when the body is no such JSON or names no full snapshot with a revision: the caller then relies on
// the full snapshot lease, which the sidecar renews after every full snapshot.
func Parse(body []byte) *druidv1alpha1.SnapshotStatus {
	var taken snapshot.Snapshot
	if err := json.Unmarshal(body, &taken); err != nil || taken.Kind != snapshot.KindFull || taken.LastRevision <= 0 {
		return nil
	}
	status := &druidv1alpha1.SnapshotStatus{EndRevision: taken.LastRevision, Timestamp: metav1.NewTime(taken.CreatedOn.Truncate(time.Second))}
	if taken.SnapName != "" {
		status.Name = ptr.To(taken.SnapName)
	}
	return status
}

// tlsConfig trusts the backup CA and presents the client certificate.
func (h *HTTP) tlsConfig(ctx context.Context, namespace string, backupTLS *druidv1alpha1.TLSConfig) (*tls.Config, error) {
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
func (h *HTTP) secret(ctx context.Context, namespace string, ref corev1.SecretReference) (*corev1.Secret, error) {
	if ref.Namespace != "" {
		namespace = ref.Namespace
	}
	secret := &corev1.Secret{}
	if err := h.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, secret); err != nil {
		return nil, fmt.Errorf("reading secret %s/%s: %w", namespace, ref.Name, err)
	}
	return secret, nil
}
