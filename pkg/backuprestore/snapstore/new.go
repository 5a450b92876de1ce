package snapstore

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// New opens the store cfg describes. Credentials are read once, here (OpenWatched follows a secret that
// changes); a store is cheap to keep for the sidecar's lifetime and must be closed with Close.
func New(ctx context.Context, cfg Config, log logr.Logger) (SnapStore, error) {
	provider, err := CanonicalProvider(cfg.Provider)
	if err != nil {
		return nil, err
	}
	secret := secretDir{dir: cfg.SecretDir, values: cfg.SecretValues}
	tr := cfg.transfers()
	log = log.WithName("snapstore")
	switch provider {
	case ProviderLocal:
		lc, err := localConfigFrom(cfg, secret)
		if err != nil {
			return nil, err
		}
		return openLocal(lc, cfg.Prefix, tr, log)
	case ProviderS3:
		sc, err := s3ConfigFrom(cfg, secret)
		if err != nil {
			return nil, err
		}
		return openS3(ctx, sc, cfg.Prefix, tr, log)
	case ProviderOSS:
		oc, err := ossConfigFrom(cfg, secret)
		if err != nil {
			return nil, err
		}
		return openS3(ctx, oc, cfg.Prefix, tr, log)
	case ProviderECS, ProviderOCS:
		sc, err := s3CompatibleConfigFrom(cfg, secret, provider)
		if err != nil {
			return nil, err
		}
		return openS3(ctx, sc, cfg.Prefix, tr, log)
	case ProviderABS:
		ac, err := absConfigFrom(cfg, secret)
		if err != nil {
			return nil, err
		}
		return openABS(ctx, ac, cfg.Prefix, tr, log)
	case ProviderGCS:
		gc, err := gcsConfigFrom(cfg, secret)
		if err != nil {
			return nil, err
		}
		return openGCS(ctx, gc, cfg.Prefix, tr, log)
	case ProviderSwift:
		sc, err := swiftConfigFrom(cfg, secret)
		if err != nil {
			return nil, err
		}
		return openSwift(ctx, sc, cfg.Prefix, tr, log)
	default:
		return nil, fmt.Errorf("storage provider %s has no implementation", provider)
	}
}

// containerFrom resolves the container: the configured one, else the secret's bucketName (which
// Gardener always sets), else fallback. An empty result is an error naming where it was looked for.
func containerFrom(cfg Config, secret secretDir, provider Provider, fallback string) (string, error) {
	if cfg.Container != "" {
		return cfg.Container, nil
	}
	name, ok, err := secret.optional(backupsecret.KeyBucketName)
	if err != nil {
		return "", err
	}
	if ok && name != "" {
		return name, nil
	}
	if fallback != "" {
		return fallback, nil
	}
	return "", fmt.Errorf("storage provider %s needs a container: set --store-container or key %q in the backup secret %s",
		provider, backupsecret.KeyBucketName, secret)
}
