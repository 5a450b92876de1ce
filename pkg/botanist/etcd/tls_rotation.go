package etcd

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// PeerCARotationPhase is how far a rotation of the peer CA got. Members of a running cluster only accept a
// peer certificate their bundle trusts, so the rotation moves in three steps with a pod rollout between them:
// trust the new CA, sign with it, forget the old one.
type PeerCARotationPhase string

const (
	// PeerCARotationIdle: the bundle holds only the signing CA.
	PeerCARotationIdle PeerCARotationPhase = "Idle"
	// PeerCARotationTrusting: the bundle holds the old and the new CA; certificates are still signed by the old.
	PeerCARotationTrusting PeerCARotationPhase = "Trusting"
	// PeerCARotationIssued: the new CA signs; the bundle still trusts the old CA for members not yet restarted.
	PeerCARotationIssued PeerCARotationPhase = "Issued"
)

// ErrPeerCARotationNotStarted is returned when a later rotation step is asked for before the first one.
var ErrPeerCARotationNotStarted = errors.New("the peer CA rotation has not been started")

// PeerCARotation reads the phase of the peer CA rotation from the peer CA secret.
func (s *TLSSecrets) PeerCARotation(ctx context.Context) (PeerCARotationPhase, error) {
	secret, err := s.get(ctx, PeerCASecretName)
	if err != nil {
		return "", err
	}
	if secret == nil {
		return PeerCARotationIdle, nil
	}
	return peerCARotationPhase(secret)
}

func peerCARotationPhase(secret *corev1.Secret) (PeerCARotationPhase, error) {
	if len(secret.Data[dataKeyNextCACertificate]) > 0 {
		return PeerCARotationTrusting, nil
	}
	certs, err := parseCertificates(secret.Data[DataKeyCABundle])
	if err != nil {
		return "", fmt.Errorf("reading the bundle of %s: %w", PeerCASecretName, err)
	}
	if len(certs) > 1 {
		return PeerCARotationIssued, nil
	}
	return PeerCARotationIdle, nil
}

// StartPeerCARotation generates a new peer CA and adds it to the bundle next to the old one, without signing
// anything with it yet. After the members restarted with the new bundle, call IssuePeerCertificatesWithNewCA.
// Calling it again while a rotation is under way changes nothing.
func (s *TLSSecrets) StartPeerCARotation(ctx context.Context) error {
	if _, err := s.ensureCA(ctx, PeerCASecretName, peerCACommonName); err != nil {
		return err
	}
	secret, err := s.getRequired(ctx, PeerCASecretName)
	if err != nil {
		return err
	}
	phase, err := peerCARotationPhase(secret)
	if err != nil || phase != PeerCARotationIdle {
		return err
	}
	next, err := newCertificateAuthority(peerCACommonName, s.values.Clock(), s.values.CAValidity)
	if err != nil {
		return err
	}
	data := copyData(secret.Data)
	data[dataKeyNextCACertificate] = next.certPEM
	data[dataKeyNextCAPrivateKey] = next.keyPEM
	data[DataKeyCABundle] = append(append([]byte{}, secret.Data[DataKeyCACertificate]...), next.certPEM...)
	if err := s.write(ctx, PeerCASecretName, secret, data, corev1.SecretTypeOpaque); err != nil {
		return err
	}
	s.logger(ctx, PeerCASecretName).Info("Peer CA rotation started: the bundle trusts the old and the new CA", "newCANotAfter", next.cert.NotAfter)
	return nil
}

// IssuePeerCertificatesWithNewCA makes the new peer CA the signing CA and re-issues the peer certificate with
// it; the bundle keeps trusting the old CA. Call it only after every member trusts the new CA.
func (s *TLSSecrets) IssuePeerCertificatesWithNewCA(ctx context.Context) error {
	secret, err := s.getRequired(ctx, PeerCASecretName)
	if err != nil {
		return err
	}
	phase, err := peerCARotationPhase(secret)
	if err != nil {
		return err
	}
	switch phase {
	case PeerCARotationIdle:
		return ErrPeerCARotationNotStarted
	case PeerCARotationTrusting:
		next, err := parseCertificateAuthority(secret.Data[dataKeyNextCACertificate], secret.Data[dataKeyNextCAPrivateKey])
		if err != nil {
			return fmt.Errorf("reading the new peer CA: %w", err)
		}
		data := copyData(secret.Data)
		data[DataKeyCACertificate] = next.certPEM
		data[DataKeyCAPrivateKey] = next.keyPEM
		delete(data, dataKeyNextCACertificate)
		delete(data, dataKeyNextCAPrivateKey)
		if err := s.write(ctx, PeerCASecretName, secret, data, corev1.SecretTypeOpaque); err != nil {
			return err
		}
		s.logger(ctx, PeerCASecretName).Info("Peer CA rotation: the new CA signs from now on")
	}
	if !s.values.HighAvailability {
		return nil
	}
	peerCA, err := s.ensureCA(ctx, PeerCASecretName, peerCACommonName)
	if err != nil {
		return err
	}
	return s.ensurePeerServer(ctx, peerCA)
}

// CompletePeerCARotation drops the old CA from the bundle once every member presents a certificate of the new
// one. It refuses while the rotation has not reached PeerCARotationIssued, and changes nothing when idle.
func (s *TLSSecrets) CompletePeerCARotation(ctx context.Context) error {
	secret, err := s.getRequired(ctx, PeerCASecretName)
	if err != nil {
		return err
	}
	phase, err := peerCARotationPhase(secret)
	if err != nil {
		return err
	}
	switch phase {
	case PeerCARotationIdle:
		return nil
	case PeerCARotationTrusting:
		return errors.New("the peer certificates are not yet signed by the new peer CA: call IssuePeerCertificatesWithNewCA first")
	}
	data := copyData(secret.Data)
	data[DataKeyCABundle] = data[DataKeyCACertificate]
	if err := s.write(ctx, PeerCASecretName, secret, data, corev1.SecretTypeOpaque); err != nil {
		return err
	}
	s.logger(ctx, PeerCASecretName).Info("Peer CA rotation completed: the old CA is no longer trusted")
	return nil
}

func (s *TLSSecrets) getRequired(ctx context.Context, name string) (*corev1.Secret, error) {
	secret, err := s.get(ctx, name)
	if err == nil && secret == nil {
		err = fmt.Errorf("secret %s/%s does not exist", s.namespace, name)
	}
	return secret, err
}
