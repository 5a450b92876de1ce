package etcd

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Default lifetimes: CAs are long-lived because replacing one needs a coordinated rotation; leaf certificates
// are short enough that a leaked key stops working within a year, and they are renewed automatically.
const (
	DefaultCAValidity          = 10 * 365 * 24 * time.Hour
	DefaultCertificateValidity = 365 * 24 * time.Hour
)

// ManagedByLabel marks the TLS secrets this package writes, so operators can tell them from hand-made ones.
const ManagedByLabel = "app.kubernetes.io/managed-by"

// managedByValue is the value of ManagedByLabel on the TLS secrets.
const managedByValue = "gardener-etcd"

// TLSValues configure the TLS secrets of one etcd (one role) in one control-plane namespace.
type TLSValues struct {
	// Role is the etcd role (main, events); it names the server and peer secrets.
	Role string
	// HighAvailability adds the peer certificate; peers of a single-member etcd never talk TLS.
	HighAvailability bool
	// CAValidity is the lifetime of newly generated CAs (DefaultCAValidity when zero).
	CAValidity time.Duration
	// CertificateValidity is the lifetime of newly issued leaf certificates (DefaultCertificateValidity when zero).
	CertificateValidity time.Duration
	// RenewalFraction re-issues a leaf once less than this fraction of its lifetime is left
	// (DefaultRenewalFraction when zero).
	RenewalFraction float64
	// Clock returns the current time; tests move it forward to reach the renewal window (time.Now when nil).
	Clock func() time.Time
}

// TLSSecretNames are the secrets an Etcd of this role references once Ensure succeeded.
type TLSSecretNames struct {
	// CA is the secret whose DataKeyCABundle verifies the server and client certificates.
	CA string
	// PeerCA is the secret whose DataKeyCABundle verifies peer certificates.
	PeerCA string
	// Server is the server certificate secret.
	Server string
	// Client is the client certificate secret.
	Client string
	// PeerServer is the peer certificate secret; empty unless the etcd is highly available.
	PeerServer string
}

// TLSSecrets generates the TLS secrets of one etcd role and keeps them valid in place: Ensure keeps what is
// still good and re-issues only what is missing, expiring or no longer matching, so repeated shoot reconciles
// do not roll the etcd pods.
type TLSSecrets struct {
	client    client.Client
	namespace string
	values    TLSValues
}

// NewTLSSecrets returns the TLS secret generator for one etcd role in namespace.
func NewTLSSecrets(c client.Client, namespace string, values TLSValues) *TLSSecrets {
	if values.CAValidity == 0 {
		values.CAValidity = DefaultCAValidity
	}
	if values.CertificateValidity == 0 {
		values.CertificateValidity = DefaultCertificateValidity
	}
	if values.RenewalFraction == 0 {
		values.RenewalFraction = DefaultRenewalFraction
	}
	if values.Clock == nil {
		values.Clock = time.Now
	}
	return &TLSSecrets{client: c, namespace: namespace, values: values}
}

// Ensure makes every TLS secret of the role exist and be valid, and returns their names.
func (s *TLSSecrets) Ensure(ctx context.Context) (TLSSecretNames, error) {
	ca, err := s.ensureCA(ctx, CASecretName, caCommonName)
	if err != nil {
		return TLSSecretNames{}, err
	}
	peerCA, err := s.ensureCA(ctx, PeerCASecretName, peerCACommonName)
	if err != nil {
		return TLSSecretNames{}, err
	}
	names := TLSSecretNames{CA: CASecretName, PeerCA: PeerCASecretName, Server: ServerSecretName(s.values.Role), Client: ClientSecretName}
	if err := s.ensureLeaf(ctx, names.Server, ca, s.serverRequest()); err != nil {
		return TLSSecretNames{}, err
	}
	if err := s.ensureLeaf(ctx, names.Client, ca, clientRequest()); err != nil {
		return TLSSecretNames{}, err
	}
	if s.values.HighAvailability {
		names.PeerServer = PeerServerSecretName(s.values.Role)
		if err := s.ensurePeerServer(ctx, peerCA); err != nil {
			return TLSSecretNames{}, err
		}
	}
	return names, nil
}

func (s *TLSSecrets) ensurePeerServer(ctx context.Context, peerCA *certificateAuthority) error {
	return s.ensureLeaf(ctx, PeerServerSecretName(s.values.Role), peerCA, s.peerRequest())
}

func (s *TLSSecrets) serverRequest() leafRequest {
	return leafRequest{
		commonName:   serverCommonName,
		dnsNames:     ServerDNSNames(s.values.Role, s.namespace),
		ipAddresses:  ServerIPAddresses(),
		extKeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
}

func (s *TLSSecrets) peerRequest() leafRequest {
	return leafRequest{
		commonName:   peerServerCommonName,
		dnsNames:     PeerDNSNames(s.values.Role, s.namespace),
		extKeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
}

func clientRequest() leafRequest {
	return leafRequest{commonName: clientCommonName, extKeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
}

func (s *TLSSecrets) logger(ctx context.Context, secret string) logr.Logger {
	return logf.FromContext(ctx).WithValues("namespace", s.namespace, "role", s.values.Role, "secret", secret)
}

// ensureCA returns the signing CA of the secret, generating it when it is missing or unusable. A valid CA is
// never replaced automatically (that would break trust in every certificate it signed); one that nears its
// end is only reported, because replacing it needs the rotation of tls_rotation.go.
func (s *TLSSecrets) ensureCA(ctx context.Context, name, commonName string) (*certificateAuthority, error) {
	log := s.logger(ctx, name)
	now := s.values.Clock()
	secret, err := s.get(ctx, name)
	if err != nil {
		return nil, err
	}
	if secret != nil {
		ca, parseErr := parseCertificateAuthority(secret.Data[DataKeyCACertificate], secret.Data[DataKeyCAPrivateKey])
		if parseErr == nil && now.Before(ca.cert.NotAfter) {
			if reason := renewalDue(ca.cert, now, s.values.RenewalFraction); reason != "" {
				log.Info("CA is due for rotation; it is kept until rotated explicitly", "reason", reason)
			}
			return ca, s.ensureBundleHoldsCA(ctx, secret, ca)
		}
		reason := "expired"
		if parseErr != nil {
			reason = parseErr.Error()
		}
		log.Info("Replacing an unusable CA; every certificate it signed is re-issued", "reason", reason)
	}
	ca, err := newCertificateAuthority(commonName, now, s.values.CAValidity)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{DataKeyCACertificate: ca.certPEM, DataKeyCAPrivateKey: ca.keyPEM, DataKeyCABundle: ca.certPEM}
	if err := s.write(ctx, name, secret, data, corev1.SecretTypeOpaque); err != nil {
		return nil, err
	}
	log.Info("Generated CA", "commonName", commonName, "notAfter", ca.cert.NotAfter)
	return ca, nil
}

// ensureBundleHoldsCA adds the signing CA to the bundle of a generated CA secret that lacks it (a bundle
// edited by hand), keeping every other CA the bundle already trusts.
func (s *TLSSecrets) ensureBundleHoldsCA(ctx context.Context, secret *corev1.Secret, ca *certificateAuthority) error {
	bundle := secret.Data[DataKeyCABundle]
	if certs, err := parseCertificates(bundle); err == nil {
		for _, c := range certs {
			if c.Equal(ca.cert) {
				return nil
			}
		}
	} else {
		bundle = nil
	}
	data := copyData(secret.Data)
	data[DataKeyCABundle] = append(append([]byte{}, ca.certPEM...), bundle...)
	s.logger(ctx, secret.Name).Info("Adding the signing CA to the CA bundle")
	return s.write(ctx, secret.Name, secret, data, corev1.SecretTypeOpaque)
}

// ensureLeaf keeps a valid leaf and re-issues one that is missing, unreadable, signed by another CA, for other
// names or usages, or within its renewal window.
func (s *TLSSecrets) ensureLeaf(ctx context.Context, name string, ca *certificateAuthority, req leafRequest) error {
	now := s.values.Clock()
	secret, err := s.get(ctx, name)
	if err != nil {
		return err
	}
	reason := "missing"
	if secret != nil {
		if reason = leafReissueReason(secret.Data, ca, req, now, s.values.RenewalFraction); reason == "" {
			return nil
		}
	}
	pair, err := ca.issue(req, now, s.values.CertificateValidity)
	if err != nil {
		return err
	}
	data := map[string][]byte{DataKeyCertificate: pair.certPEM, DataKeyPrivateKey: pair.keyPEM}
	if err := s.write(ctx, name, secret, data, corev1.SecretTypeTLS); err != nil {
		return err
	}
	s.logger(ctx, name).Info("Issued certificate", "reason", reason, "commonName", req.commonName, "issuer", ca.cert.Subject.CommonName)
	return nil
}

// get returns the secret or nil when it does not exist. A secret under the name that the generator did not
// create is a *ForeignSecretError: the generator owns its names entirely or not at all, so it never adopts,
// signs with or rewrites another owner's secret (another owner rotates it, and others trust it).
func (s *TLSSecrets) get(ctx context.Context, name string) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading secret %s/%s: %w", s.namespace, name, err)
	}
	if secret.Labels[ManagedByLabel] != managedByValue {
		return nil, &ForeignSecretError{Namespace: s.namespace, Name: name, Labels: secret.Labels}
	}
	return secret, nil
}

// write creates the secret, or replaces the data of the existing one in place (optimistically locked on the
// resourceVersion it was read with, so concurrent writers fail instead of overwriting each other). Existing
// secrets come from get, which only returns the generator's own. The type is only set on creation: it is
// immutable.
func (s *TLSSecrets) write(ctx context.Context, name string, existing *corev1.Secret, data map[string][]byte, secretType corev1.SecretType) error {
	if existing == nil {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace, Labels: map[string]string{ManagedByLabel: managedByValue}},
			Type:       secretType,
			Data:       data,
		}
		if err := s.client.Create(ctx, secret); err != nil {
			return fmt.Errorf("creating secret %s/%s: %w", s.namespace, name, err)
		}
		return nil
	}
	existing.Data = data
	if err := s.client.Update(ctx, existing); err != nil {
		return fmt.Errorf("updating secret %s/%s: %w", s.namespace, name, err)
	}
	return nil
}

func copyData(in map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(in))
	for k, v := range in {
		out[k] = bytes.Clone(v)
	}
	return out
}
