package snapshotter

import (
	"context"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// LeaseUpdater publishes backup progress, so that druid can judge BackupReady without reaching the
// sidecar: after every successful full or delta snapshot (and after an empty delta period, which is
// progress too) it is told the kind and the last revision now safely stored.
type LeaseUpdater interface {
	Update(ctx context.Context, kind snapshot.Kind, lastRevision int64) error
}

// NoLeases is the LeaseUpdater when snapshot lease renewal is disabled (or Kubernetes is absent).
type NoLeases struct{}

// Update implements LeaseUpdater.
func (NoLeases) Update(context.Context, snapshot.Kind, int64) error { return nil }

// KubernetesLeases renews the coordination.k8s.io/v1 Leases druid created for the Etcd
// (--full-snapshot-lease-name, --delta-snapshot-lease-name): holderIdentity is the last stored revision
// in decimal, renewTime now. A full snapshot renews the delta lease too, because it covers every
// revision a delta would.
type KubernetesLeases struct {
	Client    kubernetes.Interface
	Namespace string
	FullName  string
	DeltaName string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Update implements LeaseUpdater.
func (k *KubernetesLeases) Update(ctx context.Context, kind snapshot.Kind, lastRevision int64) error {
	names := []string{k.DeltaName}
	if kind == snapshot.KindFull {
		names = []string{k.FullName, k.DeltaName}
	}
	for _, name := range names {
		if err := k.renew(ctx, name, lastRevision); err != nil {
			return err
		}
	}
	return nil
}

func (k *KubernetesLeases) renew(ctx context.Context, name string, lastRevision int64) error {
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
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("renewing snapshot lease %s/%s with revision %d: %w", k.Namespace, name, lastRevision, err)
	}
	return nil
}
