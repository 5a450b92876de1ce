// Package secretref says which Secrets an Etcd references. The Etcd controller checks that they exist before
// it lets pods start, and the secret finalizer controller protects them with a finalizer; both use this
// package, so that "referenced" means the same thing everywhere.
package secretref

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// Data keys of TLS secrets (upstream etcd-druid's API): server and client certificates live under tls.crt
// and tls.key; a CA bundle under the reference's dataKey (default ca.crt).
const (
	TLSCertKey = "tls.crt"
	TLSKeyKey  = "tls.key"
)

// Reference is one Secret an Etcd references.
type Reference struct {
	// Namespace is the reference's namespace, or the Etcd's when the reference has none.
	Namespace string
	Name      string
	// Field is the spec path of the reference (e.g. spec.etcd.clientUrlTls.serverTLSSecretRef), so that a
	// message can tell the operator what to fix.
	Field string
	// Required is what the secret must hold for the pods to start and work (data keys, or alternatives of
	// keys); empty when any content will do.
	Required []backupsecret.Requirement
	// Provider is the canonical storage provider of a backup store's secret, whose required keys are the
	// provider's (backupsecret.RequiredForStore); empty for other secrets.
	Provider druidv1alpha1.StorageProvider
}

// Key is "<namespace>/<name>", the value under which the Etcd is indexed (see IndexName).
func (r Reference) Key() string { return Key(r.Namespace, r.Name) }

// Key is the index value of the secret namespace/name.
func Key(namespace, name string) string { return namespace + "/" + name }

// Of lists every Secret the Etcd references, in spec order: the CA, server and client secrets of
// spec.etcd.clientUrlTls, spec.etcd.peerUrlTls and spec.backup.tls, the backup store's secretRef and
// spec.etcd.authSecretRef. References with an empty name are skipped; the same secret may appear more than
// once under different fields. The backup secret must hold what the sidecar reads
// (backupsecret.RequiredForStore): its provider's keys, and bucketName when the store names no container.
func Of(etcd *druidv1alpha1.Etcd) []Reference {
	var refs []Reference
	add := func(ref corev1.SecretReference, field string, provider druidv1alpha1.StorageProvider, required []backupsecret.Requirement) {
		if ref.Name == "" {
			return
		}
		namespace := ref.Namespace
		if namespace == "" {
			namespace = etcd.Namespace
		}
		refs = append(refs, Reference{Namespace: namespace, Name: ref.Name, Field: field, Required: required, Provider: provider})
	}
	addTLS := func(tls *druidv1alpha1.TLSConfig, field string) {
		if tls == nil {
			return
		}
		add(tls.TLSCASecretRef.SecretReference, field+".tlsCASecretRef", "", backupsecret.Keys(ptr.Deref(tls.TLSCASecretRef.DataKey, druidv1alpha1.DefaultCADataKey)))
		add(tls.ServerTLSSecretRef, field+".serverTLSSecretRef", "", backupsecret.Keys(TLSCertKey, TLSKeyKey))
		add(tls.ClientTLSSecretRef, field+".clientTLSSecretRef", "", backupsecret.Keys(TLSCertKey, TLSKeyKey))
	}

	addTLS(etcd.Spec.Etcd.ClientUrlTLS, "spec.etcd.clientUrlTls")
	if peer := etcd.Spec.Etcd.PeerUrlTLS; peer != nil {
		addTLS(&peer.TLSConfig, "spec.etcd.peerUrlTls")
	}
	addTLS(etcd.Spec.Backup.TLS, "spec.backup.tls")
	if store := etcd.Spec.Backup.Store; store != nil && store.SecretRef != nil {
		provider, _ := druidv1alpha1.CanonicalStorageProvider(ptr.Deref(store.Provider, ""))
		add(*store.SecretRef, "spec.backup.store.secretRef", provider, backupsecret.RequiredForStore(store))
	}
	if ref := etcd.Spec.Etcd.AuthSecretRef; ref != nil {
		add(*ref, "spec.etcd.authSecretRef", "", nil)
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
