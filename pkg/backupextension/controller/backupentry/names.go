package backupentry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// Wire names of the etcd backup secret (as Gardener writes them).
const (
	// EtcdBackupSecretName is the backup secret of a shoot's etcd-main.
	EtcdBackupSecretName = "etcd-backup"
	// SourceEtcdBackupSecretName is the backup secret of the source cluster during a control-plane migration.
	SourceEtcdBackupSecretName = "source-etcd-backup"
	// SourcePrefix marks the BackupEntry of a migration source.
	SourcePrefix = "source-"
	// CreatedByAnnotation names the BackupEntry that wrote an etcd backup secret, so that the deletion of an
	// old entry of a deleted shoot never removes the secret of a new shoot in a namespace of the same name.
	CreatedByAnnotation = "backup.gardener.cloud/created-by"
	// EntrySecretNamespace is where gardenlet relays the entry secrets of a seed.
	EntrySecretNamespace = "garden"
)

// EntrySecretName is the entry secret gardenlet relays for an entry, the only source secret Gardener's
// contract gives a BackupEntry (spec.secretRef).
func EntrySecretName(entryName string) string { return "entry-" + entryName }

// ShootNamespacePrefix begins the name of every shoot control-plane namespace: Gardener's technical ID prefix
// (`shoot--<project>--<name>`, and `shoot-<project>-<name>` for shoots old enough to keep the single-dash
// form). The extension writes the etcd backup secret into no namespace without it, so an entry name cannot
// point the secret at kube-system, garden or any other namespace that is not a shoot's control plane.
const ShootNamespacePrefix = "shoot-"

// entrySeparator separates the shoot namespace from the shoot UID in an entry name. Namespaces contain it as
// well (shoot--project--name) but UIDs do not, so the last occurrence is the separator.
const entrySeparator = "--"

// ShootNamespace is the control-plane namespace of the shoot a BackupEntry belongs to: the name without a
// `source-` prefix, up to the last `--`. It must be a namespace name starting with ShootNamespacePrefix; the
// admission webhook refuses other entry names, and the controller checks again so that an entry admitted
// before (or past) the webhook still cannot write anywhere else.
func ShootNamespace(entryName string) (string, error) {
	name := strings.TrimPrefix(entryName, SourcePrefix)
	i := strings.LastIndex(name, entrySeparator)
	if i <= 0 || i+len(entrySeparator) == len(name) {
		return "", fmt.Errorf("backup entry name %q is not of the form <shoot-namespace>--<shoot-uid>", entryName)
	}
	namespace := name[:i]
	if !strings.HasPrefix(namespace, ShootNamespacePrefix) {
		return "", fmt.Errorf("backup entry name %q names namespace %q, which is no shoot namespace (%s…): the etcd backup secret is only written into shoot namespaces", entryName, namespace, ShootNamespacePrefix)
	}
	if msgs := validation.IsDNS1123Label(namespace); len(msgs) > 0 {
		return "", fmt.Errorf("backup entry name %q names namespace %q, which is no namespace name: %s", entryName, namespace, strings.Join(msgs, "; "))
	}
	return namespace, nil
}

// EtcdBackupSecretNameFor is the etcd backup secret an entry writes: source-etcd-backup for a source entry.
func EtcdBackupSecretNameFor(entryName string) string {
	if strings.HasPrefix(entryName, SourcePrefix) {
		return SourceEtcdBackupSecretName
	}
	return EtcdBackupSecretName
}

// validateSecretRef refuses a spec.secretRef other than garden/entry-<entry name>. The controller copies the
// source secret into the shoot namespace and hands it to the provider, so an entry naming any other secret
// would copy credentials of another namespace, or of another shoot, to where they do not belong.
func validateSecretRef(be *extensionsv1alpha1.BackupEntry) *field.Error {
	want := corev1.SecretReference{Name: EntrySecretName(be.Name), Namespace: EntrySecretNamespace}
	if be.Spec.SecretRef == want {
		return nil
	}
	got := be.Spec.SecretRef.Namespace + "/" + be.Spec.SecretRef.Name
	return field.Invalid(field.NewPath("spec", "secretRef"), got,
		fmt.Sprintf("must be %s/%s, the entry secret gardenlet relays for this BackupEntry; the extension copies no other secret", want.Namespace, want.Name))
}
