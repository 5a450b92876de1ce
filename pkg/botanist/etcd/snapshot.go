package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SnapshotTransport says how Snapshot reaches the backup-restore sidecar. The zero value uses the client
// service's cluster DNS name, which resolves only inside the seed.
type SnapshotTransport struct {
	// BaseURL replaces https://etcd-<role>-client.<namespace>:8080. The host is also the name the server
	// certificate is verified against, so keep it one of the certificate's SANs.
	BaseURL string
	// DialContext opens the connections (e.g. to a port-forward or a test server) while TLS still verifies
	// the host of BaseURL; net.Dialer's when nil.
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)
}

// maxSnapshotResponse bounds how much of the sidecar's answer is read; it describes the snapshot, it is not
// the snapshot.
const maxSnapshotResponse = 1 << 20

// Snapshot asks the sidecar for a final full snapshot over TLS with the secrets the Etcd's spec.backup.tls
// names (servedTLSSecretRefs): the server must present a certificate that the CA bundle trusts, and the
// request authenticates with the client certificate, as the sidecar accepts only clients of that CA.
//
// A hibernated Etcd (spec.replicas 0) has no member to take it: Snapshot says so without asking a service
// that has no endpoints, which depending on the network refuses or never answers. The caller wakes it first
// (Scale), as gardenlet's migration does.
func (e *etcd) Snapshot(ctx context.Context) (string, error) {
	existing, err := e.getExisting(ctx)
	if err != nil {
		return "", err
	}
	if existing != nil && existing.Spec.Replicas == 0 {
		return "", fmt.Errorf("no final full snapshot of %s/%s: it is hibernated (spec.replicas 0); scale it up first", e.namespace, e.name())
	}
	httpClient, err := e.snapshotHTTPClient(ctx)
	if err != nil {
		return "", err
	}
	base := e.values.SnapshotTransport.BaseURL
	if base == "" {
		base = fmt.Sprintf("https://%s-client.%s:%d", e.name(), e.namespace, backupPort)
	}
	url := strings.TrimSuffix(base, "/") + "/snapshot/full?final=true"
	var answer, lastUnavailable string // lastUnavailable: the body of the last 503, if one came
	unavailable := false
	backoff := wait.Backoff{Duration: snapshotRetryDelay, Factor: 1, Steps: snapshotAttempts}
	err = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		status, body, err := e.requestSnapshot(ctx, httpClient, url)
		switch {
		case err != nil:
			return false, err
		case status == http.StatusServiceUnavailable:
			unavailable, lastUnavailable = true, body
			e.logger(ctx).Info("The sidecar cannot take the snapshot yet", "answer", body)
			return false, nil
		case status/100 != 2:
			return false, e.snapshotFailed(status, body)
		}
		answer = body
		return true, nil
	})
	switch {
	case err == nil:
		return answer, nil
	case unavailable && ctx.Err() != nil:
		return "", fmt.Errorf("full snapshot of %s/%s: %w (last answer 503: %s)", e.namespace, e.name(), ctx.Err(), lastUnavailable)
	case unavailable && wait.Interrupted(err):
		return "", e.snapshotFailed(http.StatusServiceUnavailable, lastUnavailable)
	}
	return "", err
}

// snapshotFailed is the error of an answer other than 2xx.
func (e *etcd) snapshotFailed(status int, body string) error {
	return fmt.Errorf("full snapshot of %s/%s failed: %d %s: %s", e.namespace, e.name(), status, http.StatusText(status), body)
}

// A sidecar answers 503 Service Unavailable while it cannot take the snapshot yet: it does not know the
// backup leader, as right after its member joined or restarted, for a few seconds. The client service
// may route the request to such a member; Snapshot asks again, snapshotRetryDelay apart, up to
// snapshotAttempts times.
const (
	snapshotAttempts   = 5
	snapshotRetryDelay = 2 * time.Second
)

// requestSnapshot sends one snapshot request and returns the answer's status code and body.
func (e *etcd) requestSnapshot(ctx context.Context, httpClient *http.Client, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	e.logger(ctx).Info("Requesting a final full snapshot", "url", url)
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("requesting a full snapshot of %s/%s: %w", e.namespace, e.name(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSnapshotResponse))
	if err != nil {
		return 0, "", fmt.Errorf("reading the snapshot response of %s/%s: %w", e.namespace, e.name(), err)
	}
	return resp.StatusCode, strings.TrimSpace(string(body)), nil
}

func (e *etcd) snapshotHTTPClient(ctx context.Context) (*http.Client, error) {
	refs, err := e.servedTLSSecretRefs(ctx)
	if err != nil {
		return nil, err
	}
	secrets, err := e.checkSecrets(ctx, []secretRequirement{
		keysRequirement(refs.ClientCA.Name, refs.ClientCA.DataKey),
		keysRequirement(refs.Client, DataKeyCertificate, DataKeyPrivateKey),
	})
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secrets[refs.ClientCA.Name].Data[refs.ClientCA.DataKey]) {
		return nil, fmt.Errorf("secret %s/%s: no certificate in %s", e.namespace, refs.ClientCA.Name, refs.ClientCA.DataKey)
	}
	cert, err := clientCertificate(secrets[refs.Client])
	if err != nil {
		return nil, err
	}
	transport := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		DialContext:     e.values.SnapshotTransport.DialContext,
	}
	return &http.Client{Transport: transport}, nil
}

func clientCertificate(secret *corev1.Secret) (tls.Certificate, error) {
	cert, err := tls.X509KeyPair(secret.Data[DataKeyCertificate], secret.Data[DataKeyPrivateKey])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("secret %s: %w", client.ObjectKeyFromObject(secret), err)
	}
	return cert, nil
}
