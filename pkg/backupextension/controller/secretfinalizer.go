package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// HoldSecret puts the kind's finalizer on the bucket or entry secret an object was reconciled with, as
// Gardener's BackupBucket and BackupEntry reconcilers do: gardenlet deletes those secrets when it deletes
// the object, and without the finalizer the credentials could be gone before the extension deleted the
// bucket or the entry's backups with them. A secret already being deleted takes no new finalizer (the
// apiserver refuses one) and is used as it is.
func HoldSecret(ctx context.Context, c client.Client, secret *corev1.Secret, finalizer string) error {
	if controllerutil.ContainsFinalizer(secret, finalizer) || secret.DeletionTimestamp != nil {
		return nil
	}
	patch := client.MergeFromWithOptions(secret.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(secret, finalizer)
	if err := c.Patch(ctx, secret, patch); err != nil {
		return fmt.Errorf("adding finalizer %s to secret %s: %w", finalizer, client.ObjectKeyFromObject(secret), err)
	}
	return nil
}

// ReleaseSecret removes the kind's finalizer from the secret once the object no longer needs it (deleted or
// migrated). It reads the secret anew — gardenlet may have changed it while the deletion ran — and a secret
// that is gone needs no release.
func ReleaseSecret(ctx context.Context, c client.Client, reader client.Reader, key client.ObjectKey, finalizer string) error {
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading secret %s: %w", key, err)
	}
	if !controllerutil.ContainsFinalizer(secret, finalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(secret.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(secret, finalizer)
	if err := c.Patch(ctx, secret, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing finalizer %s from secret %s: %w", finalizer, key, err)
	}
	return nil
}
