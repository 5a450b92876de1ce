// Package secretref says which Secrets an Etcd references. The Etcd controller checks that they exist before
// it lets pods start, and the secret finalizer controller protects them with a finalizer; both use this
// package, so that "referenced" means the same thing everywhere.
package secretref

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Data keys of TLS secrets (shared/reference/druid-api.md): server and client certificates live under tls.crt
// and tls.key; a CA bundle under the reference's dataKey (default ca.crt).
const (
	TLSCertKey = "tls.crt"
	TLSKeyKey  = "tls.key"
	// LocalHostPathKey is the key of the backup secret that names the Local provider's node directory.
	LocalHostPathKey = "hostPath"
)

// Reference is one Secret an Etcd references.
type Reference struct {
	// Namespace is the reference's namespace, or the Etcd's when the reference has none.
	Namespace string
	Name      string
	// Field is the spec path of the reference (e.g. spec.etcd.clientUrlTls.serverTLSSecretRef), so that a
	// message can tell the operator what to fix.
	Field string
	// Keys are the data keys the pods read from the secret; empty when any content will do.
	Keys []string
}

// Key is "<namespace>/<name>", the value under which the Etcd is indexed (see IndexName).
func (r Reference) Key() string { return Key(r.Namespace, r.Name) }

// Key is the index value of the secret namespace/name.
func Key(namespace, name string) string { return namespace + "/" + name }

// Of lists every Secret the Etcd references, in spec order: the CA, server and client secrets of
// spec.etcd.clientUrlTls, spec.etcd.peerUrlTls and spec.backup.tls, the backup store's secretRef and
// spec.etcd.authSecretRef. References with an empty name are skipped; the same secret may appear more than
// once under different fields.
func Of(etcd *druidv1alpha1.Etcd) []Reference {
	var refs []Reference
	add := func(ref corev1.SecretReference, field string, keys ...string) {
		if ref.Name == "" {
			return
		}
		namespace := ref.Namespace
		if namespace == "" {
			namespace = etcd.Namespace
		}
		refs = append(refs, Reference{Namespace: namespace, Name: ref.Name, Field: field, Keys: keys})
	}
	addTLS := func(tls *druidv1alpha1.TLSConfig, field string) {
		if tls == nil {
			return
		}
		add(tls.TLSCASecretRef.SecretReference, field+".tlsCASecretRef", ptr.Deref(tls.TLSCASecretRef.DataKey, druidv1alpha1.DefaultCADataKey))
		add(tls.ServerTLSSecretRef, field+".serverTLSSecretRef", TLSCertKey, TLSKeyKey)
		add(tls.ClientTLSSecretRef, field+".clientTLSSecretRef", TLSCertKey, TLSKeyKey)
	}

	addTLS(etcd.Spec.Etcd.ClientUrlTLS, "spec.etcd.clientUrlTls")
	if peer := etcd.Spec.Etcd.PeerUrlTLS; peer != nil {
		addTLS(&peer.TLSConfig, "spec.etcd.peerUrlTls")
	}
	addTLS(etcd.Spec.Backup.TLS, "spec.backup.tls")
	if store := etcd.Spec.Backup.Store; store != nil && store.SecretRef != nil {
		var keys []string
		if store.Provider != nil && *store.Provider == druidv1alpha1.StorageProviderLocal {
			keys = append(keys, LocalHostPathKey)
		}
		add(*store.SecretRef, "spec.backup.store.secretRef", keys...)
	}
	if ref := etcd.Spec.Etcd.AuthSecretRef; ref != nil {
		add(*ref, "spec.etcd.authSecretRef")
	}
	return refs
}

// Keys are the sorted, distinct "<namespace>/<name>" keys of the Secrets the Etcd references.
func Keys(etcd *druidv1alpha1.Etcd) []string {
	var keys []string
	for _, r := range Of(etcd) {
		keys = append(keys, r.Key())
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
