// Package fullsnapshot asks an Etcd's backup leader for a full snapshot now, through the sidecar's
// `GET /snapshot/full`. The compaction controller asks beyond triggerFullSnapshotThreshold; the Etcd
// controller asks before it hibernates a cluster or rolls new images, so that the store holds everything the
// cluster has before its members stop. The EtcdOpsTask controller asks through the same client (Snapshot)
// for on-demand full, final full and delta snapshots (`GET /snapshot/delta`).
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
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
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

// HTTP calls `GET /snapshot/full` on the client Service's backup port, as upstream druid
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
	timeout := druidv1alpha1.DefaultEtcdSnapshotTimeout
	if etcd.Spec.Backup.EtcdSnapshotTimeout != nil {
		timeout = etcd.Spec.Backup.EtcdSnapshotTimeout.Duration
	}
	body, err := h.Snapshot(ctx, etcd, Request{Kind: podwire.SnapshotFull, Timeout: timeout + fullSnapshotRequestMargin})
	if err != nil {
		return nil, err
	}
	return Parse(body), nil
}

// Request is one snapshot to ask the sidecar for.
type Request struct {
	// Kind is podwire.SnapshotFull (`GET /snapshot/full`) or podwire.SnapshotIncr (`GET /snapshot/delta`).
	Kind podwire.SnapshotKind
	// Final asks for the final full snapshot of a cluster shut down on purpose (`?final=true`).
	Final bool
	// Timeout bounds the whole request; the sidecar answers only after the upload, and a cancelled
	// request cancels the snapshot.
	Timeout time.Duration
}

// Snapshot asks the Etcd's backup leader for the snapshot of req through its sidecar and returns the
// sidecar's answer (the snapshot's JSON; `null` for a delta when nothing changed since the last
// snapshot). It is the one client of the sidecar's snapshot endpoints: FullSnapshot (compaction, before
// an update) and the EtcdOpsTask controller's on-demand snapshots use it. An answer other than 200 is an
// error naming the URL, the status and the sidecar's message.
func (h *HTTP) Snapshot(ctx context.Context, etcd *druidv1alpha1.Etcd, req Request) ([]byte, error) {
	path, what := "/snapshot/full", "a full snapshot"
	switch {
	case req.Kind == podwire.SnapshotIncr && req.Final:
		return nil, errors.New("only a full snapshot can be final")
	case req.Kind == podwire.SnapshotIncr:
		path, what = "/snapshot/delta", "a delta snapshot"
	case req.Kind != podwire.SnapshotFull:
		return nil, fmt.Errorf("unknown snapshot kind %q", req.Kind)
	case req.Final:
		path, what = "/snapshot/full?final=true", "a final full snapshot"
	}
	backupTLS := etcd.Spec.Backup.TLS
	if backupTLS == nil || backupTLS.ClientTLSSecretRef.Name == "" {
		return nil, ErrNoClientCertificate
	}
	tlsConfig, err := h.tlsConfig(ctx, etcd.Namespace, backupTLS)
	if err != nil {
		return nil, err
	}
	endpoint := fmt.Sprintf("https://%s.%s.svc:%d", druidv1alpha1.ClientServiceName(etcd), etcd.Namespace, ptr.Deref(etcd.Spec.Backup.Port, etcdpod.DefaultBackupPort))
	if h.Endpoint != nil {
		endpoint = h.Endpoint(etcd)
	}
	httpClient := &http.Client{
		Timeout:   req.Timeout,
		Transport: &http.Transport{TLSClientConfig: tlsConfig},
	}
	defer httpClient.CloseIdleConnections()
	url := endpoint + path
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := httpClient.Do(httpReq)
	if err != nil {
		return nil, fmt.Errorf("requesting %s: %w", what, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if resp.StatusCode != http.StatusOK {
		return nil, &AnswerError{What: what, URL: url, Status: resp.Status, Code: resp.StatusCode, Message: strings.TrimSpace(string(body))}
	}
	return body, nil
}

// AnswerError is the sidecar's answer other than 200 to a snapshot request: the sidecar was reached and
// the snapshot was not taken (as opposed to a request that did not reach it).
type AnswerError struct {
	// What names the snapshot asked for, e.g. "a delta snapshot".
	What string
	// URL is the URL called, Status the HTTP status line's text (e.g. "500 Internal Server Error").
	URL, Status string
	// Code is the HTTP status code.
	Code int
	// Message is the sidecar's message.
	Message string
}

func (e *AnswerError) Error() string {
	return fmt.Sprintf("requesting %s: GET %s answered %s: %s", e.What, e.URL, e.Status, e.Message)
}

// IsRefusal tells whether err is the sidecar's refusal of druid as a caller (401 Unauthorized, 403
// Forbidden): the sidecar does not accept druid's client certificate (another CA, an upstream image that
// authenticates otherwise). Asking again does not change that; only the configuration does.
func IsRefusal(err error) bool {
	var answer *AnswerError
	return errors.As(err, &answer) && (answer.Code == http.StatusUnauthorized || answer.Code == http.StatusForbidden)
}

// maxAnswer bounds what is read of the sidecar's answer: a snapshot's JSON is a few hundred bytes.
const maxAnswer = 16 << 10

// Parse reads the sidecar's answer to /snapshot/full (the snapshot taken, as JSON with the field names
// both this project's and the upstream sidecar use) as status.lastFullSnapshot records a snapshot. It is
// nil when the body is no such JSON or names no full snapshot with a revision: the caller then relies on
// the full snapshot lease, which the sidecar renews after every full snapshot.
func Parse(body []byte) *druidv1alpha1.SnapshotStatus {
	var taken struct {
		Kind podwire.SnapshotKind `json:"kind"`
	}
	if err := json.Unmarshal(body, &taken); err != nil || taken.Kind != podwire.SnapshotFull {
		return nil
	}
	return ParseAny(body)
}

// ParseAny reads the sidecar's answer to /snapshot/full or /snapshot/delta as a SnapshotStatus: the
// object name, the last revision and when it was taken. It is nil when the body is `null` (a delta with
// nothing new) or no snapshot with a revision.
func ParseAny(body []byte) *druidv1alpha1.SnapshotStatus {
	var taken podwire.Snapshot
	if err := json.Unmarshal(body, &taken); err != nil || taken.LastRevision <= 0 || (taken.Kind != podwire.SnapshotFull && taken.Kind != podwire.SnapshotIncr) {
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
