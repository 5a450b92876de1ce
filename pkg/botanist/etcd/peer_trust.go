package etcd

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// UntrustedPeerCertificateError refuses a peer certificate that the running members' peer CA bundle does not
// verify. Peer certificates serve as server and client certificates at once, and each member loads its bundle
// only at start: a member restarted with such a certificate is refused by every member not yet restarted, the
// rolling update stops at it, and one more unready member costs the quorum. The new bundle (old and new CA)
// has to reach every member first, which RolloutPeerCA does (gardenlet calls it in the Preparing phase of a
// CA rotation, before Deploy).
type UntrustedPeerCertificateError struct {
	Namespace, Etcd string
	// Certificate is the new peer certificate's secret; Bundle the peer CA bundle the Etcd references now.
	Certificate, Bundle string
	Reason              string
}

func (e *UntrustedPeerCertificateError) Error() string {
	return fmt.Sprintf("Etcd %s/%s: the peer CA bundle the members run with (secret %s) does not verify the new peer certificate (secret %s): %s; "+
		"roll the new peer CA bundle out first (RolloutPeerCA, as gardenlet does while a CA rotation is being prepared)",
		e.Namespace, e.Etcd, e.Bundle, e.Certificate, e.Reason)
}

// checkPeerCertificateTrusted refuses refs' peer certificate when the existing Etcd runs peer TLS with a
// bundle that does not verify it. It looks only at a certificate under a new name: a TLS source whose names
// stay when the content changes (the project's generator, ExistingTLS) rewrites the secrets in place, where
// the members' loaded bundle is not visible any more; the generator sequences its own rotation, and the owner
// of ExistingTLS secrets must keep the same order (the new CA in the bundle on every member before a
// certificate it signed).
func (e *etcd) checkPeerCertificateTrusted(ctx context.Context, existing *druidv1alpha1.Etcd, refs TLSSecretRefs, secrets map[string]*corev1.Secret) error {
	if existing == nil || existing.Spec.Etcd.PeerUrlTLS == nil || refs.PeerServer == "" ||
		existing.Spec.Etcd.PeerUrlTLS.ServerTLSSecretRef.Name == refs.PeerServer {
		return nil
	}
	running := existing.Spec.Etcd.PeerUrlTLS.TLSCASecretRef
	bundle := &corev1.Secret{}
	if err := e.client.Get(ctx, client.ObjectKey{Namespace: e.namespace, Name: running.Name}, bundle); err != nil {
		if apierrors.IsNotFound(err) {
			// No member can restart with a bundle that is gone; nothing is kept alive by refusing.
			e.logger(ctx).Info("The peer CA bundle the Etcd references is gone, writing the new peer certificate unchecked", "bundle", running.Name)
			return nil
		}
		return fmt.Errorf("reading the peer CA bundle %s/%s: %w", e.namespace, running.Name, err)
	}
	reason := verifyLeaf(bundle.Data[ptr.Deref(running.DataKey, druidv1alpha1.DefaultCADataKey)], secrets[refs.PeerServer].Data[DataKeyCertificate])
	if reason == nil {
		return nil
	}
	return &UntrustedPeerCertificateError{Namespace: e.namespace, Etcd: e.name(), Certificate: refs.PeerServer, Bundle: running.Name, Reason: reason.Error()}
}

// verifyLeaf tells why the first certificate of leafPEM does not chain to a CA of bundlePEM, or nil. The
// further certificates of leafPEM (a chain) serve as intermediates.
func verifyLeaf(bundlePEM, leafPEM []byte) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bundlePEM) {
		return errors.New("the bundle holds no certificate")
	}
	var chain []*x509.Certificate
	for rest := leafPEM; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return err
		}
		chain = append(chain, cert)
	}
	if len(chain) == 0 {
		return errors.New("the certificate is not PEM")
	}
	intermediates := x509.NewCertPool()
	for _, c := range chain[1:] {
		intermediates.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	return err
}
