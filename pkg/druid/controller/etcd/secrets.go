package etcd

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
)

// Keys of TLS secrets (shared/reference/druid-api.md): server and client certificates live under tls.crt and
// tls.key; the CA under its dataKey (default ca.crt).
const (
	tlsCertKey = "tls.crt"
	tlsKeyKey  = "tls.key"
)

// SecretRequirement is one secret an Etcd references, with the data keys the pods need from it. The spec
// flow checks all of them before it lets pods start (seeds 003/004): a pod whose secret volume is missing
// never starts, and one with a key missing starts etcd without TLS material.
type SecretRequirement struct {
	Namespace string
	Name      string
	// Field is the spec path of the reference, to tell the operator what to fix.
	Field string
	// Keys must be present with non-empty data.
	Keys []string
}

// Key is the namespace/name of the required secret, as used in the referenced-secrets field index.
func (r SecretRequirement) Key() string { return r.Namespace + "/" + r.Name }

// ReferencedSecrets lists every secret the Etcd references with the keys it needs. A reference without a
// namespace points into the Etcd's namespace. The secret finalizer controller uses the same list, so
// "referenced" means the same thing everywhere.
func ReferencedSecrets(etcd *druidv1alpha1.Etcd) []SecretRequirement {
	var reqs []SecretRequirement
	add := func(ref corev1.SecretReference, field string, keys ...string) {
		if ref.Name == "" {
			return
		}
		ns := ref.Namespace
		if ns == "" {
			ns = etcd.Namespace
		}
		reqs = append(reqs, SecretRequirement{Namespace: ns, Name: ref.Name, Field: field, Keys: keys})
	}
	addTLS := func(tls *druidv1alpha1.TLSConfig, field string) {
		if tls == nil {
			return
		}
		add(tls.TLSCASecretRef.SecretReference, field+".tlsCASecretRef", ptr.Deref(tls.TLSCASecretRef.DataKey, druidv1alpha1.DefaultCADataKey))
		add(tls.ServerTLSSecretRef, field+".serverTLSSecretRef", tlsCertKey, tlsKeyKey)
		add(tls.ClientTLSSecretRef, field+".clientTLSSecretRef", tlsCertKey, tlsKeyKey)
	}
	addTLS(etcd.Spec.Etcd.ClientUrlTLS, "spec.etcd.clientUrlTls")
	if peer := etcd.Spec.Etcd.PeerUrlTLS; peer != nil {
		addTLS(&peer.TLSConfig, "spec.etcd.peerUrlTls")
	}
	addTLS(etcd.Spec.Backup.TLS, "spec.backup.tls")
	if store := etcd.Spec.Backup.Store; store != nil && store.SecretRef != nil {
		var keys []string
		if store.Provider != nil && *store.Provider == druidv1alpha1.StorageProviderLocal {
			keys = append(keys, statefulset.LocalHostPathKey)
		}
		add(*store.SecretRef, "spec.backup.store.secretRef", keys...)
	}
	if ref := etcd.Spec.Etcd.AuthSecretRef; ref != nil {
		add(*ref, "spec.etcd.authSecretRef")
	}
	return reqs
}

// ReferencedSecretKeys are the namespace/name keys of ReferencedSecrets without duplicates: the values of
// the field index that maps a Secret event to the Etcds referencing it.
func ReferencedSecretKeys(etcd *druidv1alpha1.Etcd) []string {
	seen := map[string]bool{}
	var keys []string
	for _, r := range ReferencedSecrets(etcd) {
		if !seen[r.Key()] {
			seen[r.Key()] = true
			keys = append(keys, r.Key())
		}
	}
	sort.Strings(keys)
	return keys
}

// missingSecrets checks every requirement and describes each missing secret or key, e.g.
// `secret shoot/etcd-server (spec.etcd.clientUrlTls.serverTLSSecretRef) has no key "tls.key"`.
func missingSecrets(ctx context.Context, reader client.Reader, reqs []SecretRequirement) ([]string, error) {
	var missing []string
	for _, req := range reqs {
		secret := &corev1.Secret{}
		err := reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: req.Name}, secret)
		if apierrors.IsNotFound(err) {
			missing = append(missing, fmt.Sprintf("secret %s (%s) not found", req.Key(), req.Field))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading secret %s: %w", req.Key(), err)
		}
		var keys []string
		for _, k := range req.Keys {
			if len(secret.Data[k]) == 0 {
				keys = append(keys, fmt.Sprintf("%q", k))
			}
		}
		if len(keys) > 0 {
			missing = append(missing, fmt.Sprintf("secret %s (%s) has no data for key(s) %s", req.Key(), req.Field, strings.Join(keys, ", ")))
		}
	}
	return missing, nil
}
