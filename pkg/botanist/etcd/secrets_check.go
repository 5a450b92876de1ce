package etcd

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MissingSecret is one secret an Etcd would reference that is absent (Keys nil) or lacks keys.
type MissingSecret struct {
	Name string
	// Keys are the missing data keys; nil when the whole secret is missing.
	Keys []string
}

// MissingSecretError says that the Etcd was not written because secrets it would reference are missing or
// incomplete. druid would only fail on them later (seeds 003/004: "druid deploys the StatefulSet only if the
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
		parts = append(parts, fmt.Sprintf("secret %s/%s lacks key(s) %s", e.Namespace, m.Name, strings.Join(m.Keys, ", ")))
	}
	return fmt.Sprintf("%s not written, retry later: %s", e.Etcd, strings.Join(parts, "; "))
}

// Retriable marks the error as one that goes away by itself once the secrets are written.
func (e *MissingSecretError) Retriable() bool { return true }

// secretRequirement is a secret the Etcd references and the keys druid reads from it.
type secretRequirement struct {
	name string
	keys []string
}

// requiredSecrets are the secrets of an Etcd with the given TLS names and backup secret ("" without store).
func requiredSecrets(role string, peerTLS bool, backupSecret string) []secretRequirement {
	leaf := []string{DataKeyCertificate, DataKeyPrivateKey}
	reqs := []secretRequirement{
		{name: CASecretName, keys: []string{DataKeyCABundle}},
		{name: ServerSecretName(role), keys: leaf},
		{name: ClientSecretName, keys: leaf},
	}
	if peerTLS {
		reqs = append(reqs,
			secretRequirement{name: PeerCASecretName, keys: []string{DataKeyCABundle}},
			secretRequirement{name: PeerServerSecretName(role), keys: leaf})
	}
	if backupSecret != "" {
		reqs = append(reqs, secretRequirement{name: backupSecret, keys: []string{backupSecretKeyBucketName}})
	}
	return reqs
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
		var keys []string
		for _, k := range req.keys {
			if len(secret.Data[k]) == 0 {
				keys = append(keys, k)
			}
		}
		if keys != nil {
			missing = append(missing, MissingSecret{Name: req.name, Keys: keys})
			continue
		}
		found[req.name] = secret
	}
	if len(missing) > 0 {
		return nil, &MissingSecretError{Namespace: e.namespace, Etcd: e.name(), Missing: missing}
	}
	return found, nil
}
