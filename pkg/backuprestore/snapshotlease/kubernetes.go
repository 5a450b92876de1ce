// Package snapshotlease publishes backup progress in the snapshot leases druid creates for an Etcd.
package snapshotlease

import (
	"context"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// Kubernetes renews the coordination.k8s.io/v1 Leases druid created for the Etcd
// (--full-snapshot-lease-name, --delta-snapshot-lease-name): holderIdentity is the last stored revision
// in decimal, renewTime now, and the annotation etcdpod.SnapshotNameAnnotation the stored snapshot's base
// name (kept as it is when no new snapshot was stored). A full snapshot renews the delta lease too,
// because it covers every revision a delta would.
type Kubernetes struct {
	Client    kubernetes.Interface
	Namespace string
	FullName  string
	DeltaName string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Update implements snapshotter.LeaseUpdater.
func (k *Kubernetes) Update(ctx context.Context, kind snapshot.Kind, lastRevision int64, name string) error {
	names := []string{k.DeltaName}
	if kind == snapshot.KindFull {
		names = []string{k.FullName, k.DeltaName}
	}
	for _, lease := range names {
		if err := k.renew(ctx, lease, lastRevision, name); err != nil {
			return err
		}
	}
	return nil
}

func (k *Kubernetes) renew(ctx context.Context, name string, lastRevision int64, snapName string) error {
	now := time.Now
	if k.Now != nil {
		now = k.Now
	}
	leases := k.Client.CoordinationV1().Leases(k.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lease, err := leases.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		holder := strconv.FormatInt(lastRevision, 10)
		renew := metav1.NewMicroTime(now())
		lease.Spec.HolderIdentity, lease.Spec.RenewTime = &holder, &renew
		if snapName != "" {
			metav1.SetMetaDataAnnotation(&lease.ObjectMeta, etcdpod.SnapshotNameAnnotation, snapName)
		}
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("renewing snapshot lease %s/%s with revision %d: %w", k.Namespace, name, lastRevision, err)
	}
	return nil
}
