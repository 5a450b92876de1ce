package backupbucket

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// GeneratedSecretNamespaceAnnotation sets the namespace of a BackupBucket's generated secret (Gardener's
// AnnotationBackupBucketGeneratedSecretNamespace, read by its extensions library's
// GeneratedSecretObjectMeta). gardenlet sets it on every BackupBucket it asks to reconcile, to its own
// garden namespace: `garden` in a seed, `kube-system` for a self-hosted shoot.
const GeneratedSecretNamespaceAnnotation = "backupbucket.extensions.gardener.cloud/generated-secret-namespace"

var generatedSecretNamespacePath = field.NewPath("metadata", "annotations").Key(GeneratedSecretNamespaceAnnotation)

// validateGeneratedSecretNamespace refuses an annotation value that is no namespace name.
func validateGeneratedSecretNamespace(bb *extensionsv1alpha1.BackupBucket) field.ErrorList {
	namespace, ok := bb.Annotations[GeneratedSecretNamespaceAnnotation]
	if !ok {
		return nil
	}
	if msgs := validation.IsDNS1123Label(namespace); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(generatedSecretNamespacePath, namespace, "must be a namespace name: "+strings.Join(msgs, "; "))}
	}
	return nil
}

// generatedSecretKey is where the bucket's generated secret belongs: generated-bucket-<name> in the
// annotated namespace, else in Options.GeneratedSecretNamespace. The secret carries the bucket's
// credentials, so the annotation may name only a namespace generatedSecretNamespaceAllowed admits: any
// other is refused naming the annotation, and nothing is written there.
func (a *actuator) generatedSecretKey(bb *extensionsv1alpha1.BackupBucket) (client.ObjectKey, error) {
	key := client.ObjectKey{Name: GeneratedSecretName(bb.Name), Namespace: a.Options.GeneratedSecretNamespace}
	namespace, ok := bb.Annotations[GeneratedSecretNamespaceAnnotation]
	if !ok {
		return key, nil
	}
	if !a.generatedSecretNamespaceAllowed(namespace) {
		allowed := append([]string{key.Namespace}, a.Options.AllowedGeneratedSecretNamespaces...)
		return client.ObjectKey{}, field.Forbidden(generatedSecretNamespacePath, fmt.Sprintf(
			"namespace %q is not one the extension may write generated bucket secrets into (%s; the operator adds others with --generated-secret-namespaces)",
			namespace, strings.Join(allowed, ", ")))
	}
	key.Namespace = namespace
	return key, nil
}

// generatedSecretNamespaceAllowed tells whether the extension may write and delete generated secrets in the
// namespace: Options.GeneratedSecretNamespace or one of Options.AllowedGeneratedSecretNamespaces (an
// operator's choice).
func (a *actuator) generatedSecretNamespaceAllowed(namespace string) bool {
	return namespace == a.Options.GeneratedSecretNamespace || slices.Contains(a.Options.AllowedGeneratedSecretNamespaces, namespace)
}

// writeGeneratedSecret writes the generated bucket secret, owned by the BackupBucket so that it also goes
// away if the bucket object is removed without the controller, and so that the controller can tell it from
// a secret of the same name it did not write (isBucketsSecret). Such a secret is left as it is and the bucket
// fails with a GeneratedSecretNotOwnedError.
func (a *actuator) writeGeneratedSecret(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, key client.ObjectKey, data map[string][]byte) (*corev1.SecretReference, error) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, a.Client, secret, func() error {
		if !secret.CreationTimestamp.IsZero() && !isBucketsSecret(bb, secret) {
			return &GeneratedSecretNotOwnedError{Secret: key, Bucket: bb.Name}
		}
		secret.Type = corev1.SecretTypeOpaque
		secret.Data = data
		return controllerutil.SetOwnerReference(bb, secret, a.Client.Scheme())
	})
	var notOwned *GeneratedSecretNotOwnedError
	if errors.As(err, &notOwned) {
		return nil, notOwned
	}
	if err != nil {
		return nil, fmt.Errorf("writing the generated secret %s: %w", key, err)
	}
	return &corev1.SecretReference{Name: secret.Name, Namespace: secret.Namespace}, nil
}

// deleteGeneratedSecrets deletes the bucket's generated secret wherever it may be: where the status says it
// was written (as Gardener's extensions delete it) and where it belongs now (keys). Neither place is proof
// that the bucket wrote a secret there — the annotation may have moved before any reconcile wrote, and the
// status is only a record — so a key is acted on only when it names generated-bucket-<bucket name> in a
// namespace the extension may write into, and a secret there is deleted only when it is the bucket's
// (isBucketsSecret). Anyone else's is kept (generatedSecretKept).
func (a *actuator) deleteGeneratedSecrets(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, keys ...client.ObjectKey) error {
	if ref := bb.Status.GeneratedSecretRef; ref != nil {
		keys = append(keys, client.ObjectKey{Name: ref.Name, Namespace: ref.Namespace})
	}
	for _, key := range keys {
		if key.Name != GeneratedSecretName(bb.Name) || !a.generatedSecretNamespaceAllowed(key.Namespace) {
			logf.FromContext(ctx).Info("Not deleting a secret that is not the bucket's generated secret in a namespace the extension writes into", "secret", key)
			continue
		}
		if err := a.deleteGeneratedSecret(ctx, bb, key); err != nil {
			return err
		}
	}
	return nil
}

// deleteGeneratedSecret deletes the secret at key if it is the bucket's. The preconditions make sure a
// secret replaced since the read is not deleted.
func (a *actuator) deleteGeneratedSecret(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, key client.ObjectKey) error {
	secret := &corev1.Secret{}
	if err := a.APIReader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading the generated secret %s: %w", key, err)
	}
	if !isBucketsSecret(bb, secret) {
		a.generatedSecretKept(ctx, bb, key)
		return nil
	}
	if err := a.Client.Delete(ctx, secret, client.Preconditions{UID: &secret.UID, ResourceVersion: &secret.ResourceVersion}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the generated secret %s: %w", key, err)
	}
	return nil
}

// generatedSecretKept tells, in the log and as a Normal event on the bucket, that a secret named like its
// generated secret was left because the bucket does not own it.
func (a *actuator) generatedSecretKept(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, key client.ObjectKey) {
	logf.FromContext(ctx).Info("Keeping a generated secret the backup bucket does not own", "secret", key)
	if a.Recorder != nil {
		a.Recorder.Eventf(bb, nil, corev1.EventTypeNormal, "GeneratedSecretKept", "DeleteGeneratedSecret",
			"the secret %s is not owned by this BackupBucket (no ownerReference with its uid) and was not deleted", key)
	}
}

// isBucketsSecret tells whether the secret is the bucket's generated secret: one it owns (ownedBy), or one
// without any owner that the bucket's status.generatedSecretRef names. Gardener's provider extensions write
// the generated secret without an ownerReference and record it in the status; such a secret is taken over
// (overwritten, owned from then on) when this extension takes over the bucket, so that a switch-over fails
// no bucket. A secret of the name that the status does not name, or that has another owner, is not the
// bucket's.
func isBucketsSecret(bb *extensionsv1alpha1.BackupBucket, secret *corev1.Secret) bool {
	if ownedBy(bb, secret) {
		return true
	}
	ref := bb.Status.GeneratedSecretRef
	return len(secret.OwnerReferences) == 0 && ref != nil && ref.Name == secret.Name && ref.Namespace == secret.Namespace
}

// ownedBy tells whether the bucket wrote the secret: every generated secret this extension writes carries
// an ownerReference with the bucket's uid (it has from the start, so secrets of earlier versions are
// recognised). A secret of the same name without it is someone else's: one Gardener's provider extension
// left before a switch-over to this extension, an operator's, or one of an earlier bucket of the same name.
func ownedBy(bb *extensionsv1alpha1.BackupBucket, secret *corev1.Secret) bool {
	return slices.ContainsFunc(secret.OwnerReferences, func(ref metav1.OwnerReference) bool { return ref.UID == bb.UID })
}

// GeneratedSecretNotOwnedError reports a secret named like the bucket's generated secret that the bucket does
// not own (ownedBy): overwriting it would replace credentials someone else put there — during a switch-over
// those of the provider extension gardenlet may still rely on. The bucket fails until the secret is removed.
type GeneratedSecretNotOwnedError struct {
	Secret client.ObjectKey
	Bucket string
}

func (e *GeneratedSecretNotOwnedError) Error() string {
	return fmt.Sprintf("generated secret %s is not owned by BackupBucket %s (no ownerReference with its uid) and is left untouched: "+
		"delete it, and the next reconcile writes the bucket's own", e.Secret, e.Bucket)
}
