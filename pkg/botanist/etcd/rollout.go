package etcd

import (
	"context"
	"fmt"

	"k8s.io/client-go/util/retry"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// RolloutPeerCA replaces the peer CA of a running multi-member etcd. Members accept only peers whose
// certificate their bundle trusts and load bundle and certificate at start, so each step is followed by a
// Deploy (the peer TLS checksum rolls the pods) and a wait for the rollout:
//
//  1. trust the new CA next to the old one;
//  2. re-issue the peer certificate with the new CA (the old one is still trusted for members not yet
//     restarted);
//  3. drop the old CA from the bundle.
//
// It resumes at the phase the peer CA secret records and repeats that phase's rollout, so a rotation
// interrupted by a failed wait continues on the next call. Without peer TLS nothing presents a peer certificate: the secrets are rotated at once.
// This is the rotation of the project's generator; with another TLS source the owner of the secrets rotates
// them, and RolloutPeerCA only rolls its current peer bundle out, with the peer certificate the members run
// with (rolloutOwnersPeerCA).
func (e *etcd) RolloutPeerCA(ctx context.Context) error {
	log := e.logger(ctx)
	existing, err := e.getExisting(ctx)
	if err != nil {
		return err
	}
	peerTLS := existing != nil && existing.Spec.Etcd.PeerUrlTLS != nil
	generated, ok := e.tlsSource().(*GeneratedTLS)
	if !ok {
		return e.rolloutOwnersPeerCA(ctx, existing)
	}
	// Without peer TLS no peer certificate is issued: only the CA is rotated.
	tlsSecrets := generated.generator(TLSRequest{Namespace: e.namespace, Role: e.values.Role, PeerTLS: peerTLS})
	rollout := func(PeerCARotationPhase) error { return nil }
	if peerTLS {
		rollout = func(phase PeerCARotationPhase) error {
			log.Info("Rolling out the peer CA rotation step", "phase", phase)
			if err := e.Deploy(ctx); err != nil {
				return fmt.Errorf("peer CA rotation, phase %s: %w", phase, err)
			}
			if err := e.peerCARolloutWait(ctx, phase); err != nil {
				return fmt.Errorf("peer CA rotation, phase %s: %w", phase, err)
			}
			return nil
		}
	}
	phase, err := tlsSecrets.PeerCARotation(ctx)
	if err != nil {
		return err
	}
	if phase == PeerCARotationIdle {
		if err := tlsSecrets.StartPeerCARotation(ctx); err != nil {
			return err
		}
		phase = PeerCARotationTrusting
	}
	if phase == PeerCARotationTrusting {
		if err := rollout(PeerCARotationTrusting); err != nil {
			return err
		}
		if err := tlsSecrets.IssuePeerCertificatesWithNewCA(ctx); err != nil {
			return err
		}
	}
	if err := rollout(PeerCARotationIssued); err != nil {
		return err
	}
	if err := tlsSecrets.CompletePeerCARotation(ctx); err != nil {
		return err
	}
	if err := rollout(PeerCARotationIdle); err != nil {
		return err
	}
	log.Info("Peer CA rotation completed")
	return nil
}

func (e *etcd) peerCARolloutWait(ctx context.Context, phase PeerCARotationPhase) error {
	if e.values.PeerCARolloutWait != nil {
		return e.values.PeerCARolloutWait(ctx, phase)
	}
	return e.Wait(ctx)
}

// rolloutOwnersPeerCA is RolloutPeerCA when the secrets belong to another owner (gardenlet's secrets manager
// moves the peer CA through its phases itself). Like Gardener's etcd component, it points the Etcd at the
// owner's current peer CA bundle, keeping the peer certificate the members run with, and waits for the
// rollout: once every member trusts the old and the new CA, a Deploy may bring certificates of the new CA
// (checkPeerCertificateTrusted refuses them before). Without peer TLS there is nothing to roll.
func (e *etcd) rolloutOwnersPeerCA(ctx context.Context, existing *druidv1alpha1.Etcd) error {
	if existing == nil || existing.Spec.Etcd.PeerUrlTLS == nil {
		return nil
	}
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		existing, err := e.getExisting(ctx)
		if err != nil || existing == nil {
			return err
		}
		refs, err := e.tlsSecretRefs(ctx, true)
		if err != nil {
			return err
		}
		refs.PeerServer = existing.Spec.Etcd.PeerUrlTLS.ServerTLSSecretRef.Name
		secrets, err := e.checkSecrets(ctx, tlsRequirements(refs))
		if err != nil {
			return err
		}
		desired := existing.DeepCopy()
		e.setPeerTLS(desired, true, refs, e.peerTLSChecksum(refs, secrets))
		return e.write(ctx, existing, desired)
	})
	if err != nil {
		return fmt.Errorf("rolling out the peer CA bundle of the TLS source: %w", err)
	}
	if err := e.peerCARolloutWait(ctx, PeerCARotationIdle); err != nil {
		return fmt.Errorf("rolling out the peer CA bundle of the TLS source: %w", err)
	}
	e.logger(ctx).Info("Rolled out the peer CA bundle of the TLS source")
	return nil
}
