// Package gardenletsecrets starts gardenlet's secrets manager for a shoot's control-plane namespace the way
// one gardenlet reconcile of the shoot does, as far as etcd goes: a fresh manager that loads the existing
// secrets of gardenlet's identity, and the etcd CAs generated with the options of gardenlet's botanist
// (pkg/gardenlet/operation/botanist/secrets.go in Gardener), in whatever phase the shoot's CA rotation is.
// Tests use it to drive the CA rotation the etcd component follows.
package gardenletsecrets

import (
	"context"
	"time"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	secretsutils "github.com/gardener/gardener/pkg/utils/secrets"
	secretsmanager "github.com/gardener/gardener/pkg/utils/secrets/manager"
	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Identity is the identity gardenlet's secrets manager labels the shoot's secrets with.
const Identity = "gardenlet"

// CARotation is where the shoot's CA rotation stands (shoot.status.credentials.rotation.certificateAuthorities).
type CARotation struct {
	// LastInitiation is nil while the CAs were never rotated; set, the rotation is prepared (phase
	// Preparing: the bundles hold the old and the new CA).
	LastInitiation *time.Time
	// Completing drops the old CA from the bundles (phase Completing).
	Completing bool
}

// Manager is the secrets manager one gardenlet reconcile of the shoot in namespace starts with, its etcd CAs
// (client and peer) generated. The caller ends the reconcile with Cleanup, as gardenlet does.
func Manager(ctx context.Context, c client.Client, namespace string, rotation CARotation) (secretsmanager.Interface, error) {
	opts := []secretsmanager.NewOption{secretsmanager.WithNamespaces(namespace)}
	if rotation.LastInitiation != nil {
		opts = append(opts, secretsmanager.WithSecretNamesToTimes(map[string]time.Time{
			v1beta1constants.SecretNameCAETCD:     *rotation.LastInitiation,
			v1beta1constants.SecretNameCAETCDPeer: *rotation.LastInitiation,
		}))
	}
	sm, err := secretsmanager.New(ctx, logr.Discard(), clock.RealClock{}, c, Identity, opts...)
	if err != nil {
		return nil, err
	}
	for _, config := range []*secretsutils.CertificateSecretConfig{
		{Name: v1beta1constants.SecretNameCAETCD, CommonName: "etcd", CertType: secretsutils.CACert},
		{Name: v1beta1constants.SecretNameCAETCDPeer, CommonName: "etcd-peer", CertType: secretsutils.CACert},
	} {
		generate := []secretsmanager.GenerateOption{secretsmanager.Persist(), secretsmanager.Rotate(secretsmanager.KeepOld)}
		if rotation.Completing {
			generate = append(generate, secretsmanager.IgnoreOldSecrets())
		}
		if rotation.LastInitiation == nil {
			generate = append(generate, secretsmanager.IgnoreConfigChecksumForCASecretName())
		}
		if _, err := sm.Generate(ctx, config, generate...); err != nil {
			return nil, err
		}
	}
	return sm, nil
}
