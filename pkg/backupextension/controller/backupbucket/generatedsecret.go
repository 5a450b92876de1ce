package backupbucket

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

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
// credentials, so the annotation may name only that namespace or one of
// Options.AllowedGeneratedSecretNamespaces (an operator's choice): any other is refused naming the
// annotation, and nothing is written there.
func (a *actuator) generatedSecretKey(bb *extensionsv1alpha1.BackupBucket) (client.ObjectKey, error) {
	key := client.ObjectKey{Name: GeneratedSecretName(bb.Name), Namespace: a.Options.GeneratedSecretNamespace}
	namespace, ok := bb.Annotations[GeneratedSecretNamespaceAnnotation]
	if !ok || namespace == key.Namespace {
		return key, nil
	}
	if !slices.Contains(a.Options.AllowedGeneratedSecretNamespaces, namespace) {
		allowed := append([]string{key.Namespace}, a.Options.AllowedGeneratedSecretNamespaces...)
		return client.ObjectKey{}, field.Forbidden(generatedSecretNamespacePath, fmt.Sprintf(
			"namespace %q is not one the extension may write generated bucket secrets into (%s; the operator adds others with --generated-secret-namespaces)",
			namespace, strings.Join(allowed, ", ")))
	}
	key.Namespace = namespace
	return key, nil
}

// writeGeneratedSecret writes the generated bucket secret, owned by the BackupBucket so that it also goes
// away if the bucket object is removed without the controller.
func (a *actuator) writeGeneratedSecret(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, key client.ObjectKey, data map[string][]byte) (*corev1.SecretReference, error) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, a.Client, secret, func() error {
		secret.Type = corev1.SecretTypeOpaque
		secret.Data = data
		return controllerutil.SetOwnerReference(bb, secret, a.Client.Scheme())
	})
	if err != nil {
		return nil, fmt.Errorf("writing the generated secret %s: %w", client.ObjectKeyFromObject(secret), err)
	}
	return &corev1.SecretReference{Name: secret.Name, Namespace: secret.Namespace}, nil
}

// deleteGeneratedSecrets deletes the bucket's generated secret wherever it may be: where the status says it
// was written (as Gardener's extensions delete it) and where it belongs now (keys). Only a secret named
// generated-bucket-<bucket name> is ever deleted, whatever the status holds.
func (a *actuator) deleteGeneratedSecrets(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, keys ...client.ObjectKey) error {
	if ref := bb.Status.GeneratedSecretRef; ref != nil {
		keys = append(keys, client.ObjectKey{Name: ref.Name, Namespace: ref.Namespace})
	}
	for _, key := range keys {
		if key.Name != GeneratedSecretName(bb.Name) || key.Namespace == "" {
			continue
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
		if err := a.Client.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting the generated secret %s: %w", key, err)
		}
	}
	return nil
}
