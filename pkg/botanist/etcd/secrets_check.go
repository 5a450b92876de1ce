package etcd

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// MissingSecret is one secret an Etcd would reference that is absent (Keys nil) or lacks keys.
type MissingSecret struct {
	Name string
	// Keys are the missing data keys; nil when the whole secret is missing. Where a secret may hold one
	// of several key sets (Swift's password or application credential), the entry names the alternatives.
	Keys []string
	// Provider is the storage provider whose keys a backup secret lacks; empty for other secrets.
	Provider druidv1alpha1.StorageProvider
}

// MissingSecretError says that the Etcd was not written because secrets it would reference are missing or
// incomplete. druid would only fail on them later ("druid deploys the StatefulSet only if the
// secrets are available"), so the shoot flow gets this retriable error instead and retries the Deploy, e.g.
// until the BackupEntry controller wrote etcd-backup. Detect it with errors.As.
type MissingSecretError struct {
	Namespace string
	Etcd      string
	Missing   []MissingSecret
}

func (e *MissingSecretError) Error() string {
	parts := make([]string, 0, len(e.Missing))
	for _, m := range e.Missing {
		if m.Keys == nil {
			parts = append(parts, fmt.Sprintf("secret %s/%s is missing", e.Namespace, m.Name))
			continue
		}
		provider := ""
		if m.Provider != "" {
			provider = fmt.Sprintf(" (backup secret of provider %s)", m.Provider)
		}
		parts = append(parts, fmt.Sprintf("secret %s/%s%s lacks key(s) %s", e.Namespace, m.Name, provider, strings.Join(m.Keys, ", ")))
	}
	return fmt.Sprintf("%s not written, retried later: %s", e.Etcd, strings.Join(parts, "; "))
}

// Retriable marks the error as one that goes away by itself once the secrets are written.
func (e *MissingSecretError) Retriable() bool { return true }

// secretRequirement is a secret the Etcd references and what druid and the pods read from it.
type secretRequirement struct {
	name     string
	required []backupsecret.Requirement
	// provider is the canonical storage provider of the backup secret; empty for other secrets.
	provider druidv1alpha1.StorageProvider
}

// requiredSecrets are the secrets of an Etcd with the given TLS secrets and backup store (nil without one).
// The backup secret must hold its provider's keys (backupsecret.Required), which the sidecar reads, and
// bucketName, which becomes the Etcd's container.
func requiredSecrets(tls TLSSecretRefs, store *druidv1alpha1.StoreSpec) []secretRequirement {
	reqs := tlsRequirements(tls)
	if name := storeSecretName(store); name != "" {
		reqs = append(reqs, backupSecretRequirement(name, ptr.Deref(store.Provider, "")))
	}
	return reqs
}

// keysRequirement is a secret that must hold every one of keys.
func keysRequirement(name string, keys ...string) secretRequirement {
	return secretRequirement{name: name, required: backupsecret.Keys(keys...)}
}

// backupSecretRequirement is a backup secret: its provider's keys, which the sidecar (or a copy Job) reads,
// and bucketName, which becomes the store's container.
func backupSecretRequirement(name string, provider druidv1alpha1.StorageProvider) secretRequirement {
	canonical, _ := druidv1alpha1.CanonicalStorageProvider(provider)
	return secretRequirement{name: name, provider: canonical,
		required: append(backupsecret.Required(canonical), backupsecret.Keys(backupsecret.KeyBucketName)...)}
}

// checkSecrets reads every required secret and returns them by name, or a *MissingSecretError listing every
// missing secret and key at once so that one retry message says all that is wrong.
func (e *etcd) checkSecrets(ctx context.Context, reqs []secretRequirement) (map[string]*corev1.Secret, error) {
	found := map[string]*corev1.Secret{}
	var missing []MissingSecret
	for _, req := range reqs {
		secret := &corev1.Secret{}
		if err := e.client.Get(ctx, client.ObjectKey{Namespace: e.namespace, Name: req.name}, secret); err != nil {
			if apierrors.IsNotFound(err) {
				missing = append(missing, MissingSecret{Name: req.name})
				continue
			}
			return nil, fmt.Errorf("reading secret %s/%s: %w", e.namespace, req.name, err)
		}
		if unmet := backupsecret.UnmetIn(req.required, req.provider, secret.Data); len(unmet) > 0 {
			missing = append(missing, MissingSecret{Name: req.name, Keys: keyNames(unmet), Provider: req.provider})
			continue
		}
		found[req.name] = secret
	}
	if len(missing) > 0 {
		return nil, &MissingSecretError{Namespace: e.namespace, Etcd: e.name(), Missing: missing}
	}
	return found, nil
}

// keyNames names unmet requirements: a single key by its name, alternatives as backupsecret spells them.
func keyNames(reqs []backupsecret.Requirement) []string {
	names := make([]string, len(reqs))
	for i, r := range reqs {
		if len(r.AnyOf) == 1 && len(r.AnyOf[0]) == 1 {
			names[i] = r.AnyOf[0][0]
			continue
		}
		names[i] = r.String()
	}
	return names
}
