package validation

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// validateObjectNames checks the names druid copies into the StatefulSet: the apiserver would refuse the
// StatefulSet (or its pods) only when druid creates it, leaving the Etcd stuck in reconcile errors, or a
// running cluster unable to roll. Checked here the Etcd is refused at once, naming the field.
//
//   - priorityClassName and storageClass name cluster objects: DNS subdomains.
//   - volumeClaimTemplate is both the StatefulSet's claim template and the pod volume druid mounts it
//     as; pod volume names are DNS labels.
//   - images (spec.etcd.image, spec.backup.image) must parse as image references.
//
// Each is optional, and "" means unset as nil does (druid renders both alike): Gardener's seed provider
// extensions write storageClass: "" for the seed's default class, "" for an image means druid's
// configured image.
func validateObjectNames(spec *druidv1alpha1.EtcdSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateDNSSubdomain(spec.PriorityClassName, fld.Child("priorityClassName"))...)
	errs = append(errs, validateDNSSubdomain(spec.StorageClass, fld.Child("storageClass"))...)
	if v := spec.VolumeClaimTemplate; v != nil && *v != "" {
		for _, msg := range utilvalidation.IsDNS1123Label(*v) {
			errs = append(errs, field.Invalid(fld.Child("volumeClaimTemplate"), *v, "must be a DNS label (it names the pods' data volume): "+msg))
		}
	}
	errs = append(errs, validateImage(spec.Etcd.Image, fld.Child("etcd", "image"))...)
	errs = append(errs, validateImage(spec.Backup.Image, fld.Child("backup", "image"))...)
	return errs
}

// validateDNSSubdomain checks an optional object name; nil and "" mean none.
func validateDNSSubdomain(value *string, fld *field.Path) field.ErrorList {
	if value == nil || *value == "" {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Subdomain(*value) {
		errs = append(errs, field.Invalid(fld, *value, "must be the name of an object (a DNS subdomain): "+msg))
	}
	return errs
}

// validateImage refuses an image that is no image reference (registry/repository[:tag][@digest]); an
// unparsable one would only fail when the kubelet pulls it, with every member that rolled to it down.
func validateImage(image *string, fld *field.Path) field.ErrorList {
	if image == nil || *image == "" {
		return nil
	}
	if _, err := name.ParseReference(*image); err != nil {
		return field.ErrorList{field.Invalid(fld, *image, fmt.Sprintf("must be an image reference such as registry.example.com/etcd-wrapper:v0.4.0 (or empty for druid's image): %v", err))}
	}
	return nil
}

// secretReference is one Secret reference of an Etcd.
type secretReference struct {
	fld     *field.Path
	name    string
	dataKey *string
}

// etcdSecretReferences are the Secret references of an Etcd that druid mounts into the pods. Their
// namespaces are checked by druid's webhook (the object's own namespace only).
func etcdSecretReferences(spec *druidv1alpha1.EtcdSpec, fld *field.Path) []secretReference {
	var refs []secretReference
	tls := func(t *druidv1alpha1.TLSConfig, at *field.Path) {
		if t == nil {
			return
		}
		refs = append(refs,
			secretReference{at.Child("tlsCASecretRef"), t.TLSCASecretRef.Name, t.TLSCASecretRef.DataKey},
			secretReference{at.Child("serverTLSSecretRef"), t.ServerTLSSecretRef.Name, nil},
			secretReference{at.Child("clientTLSSecretRef"), t.ClientTLSSecretRef.Name, nil})
	}
	etcd := fld.Child("etcd")
	tls(spec.Etcd.ClientUrlTLS, etcd.Child("clientUrlTls"))
	if spec.Etcd.PeerUrlTLS != nil {
		tls(&spec.Etcd.PeerUrlTLS.TLSConfig, etcd.Child("peerUrlTls"))
	}
	tls(spec.Backup.TLS, fld.Child("backup", "tls"))
	if ref := spec.Etcd.AuthSecretRef; ref != nil {
		refs = append(refs, secretReference{fld: etcd.Child("authSecretRef"), name: ref.Name})
	}
	return refs
}

// validateSecretReferences refuses a Secret name that is no object name and a CA data key that is no
// Secret key: druid mounts the secrets as pod volumes and the CA key as a file name, so either would only
// fail when the StatefulSet is written. An empty name is left to the Required checks (and an empty client
// certificate reference means none).
func validateSecretReferences(refs []secretReference) field.ErrorList {
	var errs field.ErrorList
	for _, ref := range refs {
		errs = append(errs, validateDNSSubdomain(&ref.name, ref.fld.Child("name"))...)
		if ref.dataKey != nil && *ref.dataKey != "" {
			for _, msg := range utilvalidation.IsConfigMapKey(*ref.dataKey) {
				errs = append(errs, field.Invalid(ref.fld.Child("dataKey"), *ref.dataKey, "must be a key of the secret's data: "+msg))
			}
		}
	}
	return errs
}

// validateStoreSecretName checks the name of a store's backup secret, which druid mounts into the sidecar
// (and the copy and compaction Jobs).
func validateStoreSecretName(ref *corev1.SecretReference, fld *field.Path) field.ErrorList {
	if ref == nil {
		return nil
	}
	return validateDNSSubdomain(&ref.Name, fld.Child("name"))
}
