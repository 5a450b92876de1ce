package node

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// Heartbeat intervals as the kubelet's defaults: the node lifecycle controller marks a node NotReady when
// its lease is not renewed within its grace period (40-50 s).
const (
	leaseDuration       = 40 * time.Second
	leaseRenewInterval  = 10 * time.Second
	statusRenewInterval = 60 * time.Second
	leaseNamespace      = "kube-node-lease"
)

func (n *Node) heartbeat(ctx context.Context) {
	lease := time.NewTicker(leaseRenewInterval)
	defer lease.Stop()
	status := time.NewTicker(statusRenewInterval)
	defer status.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-lease.C:
			if err := n.renewLease(ctx); err != nil && ctx.Err() == nil {
				n.cfg.Log.Error(err, "Renewing node lease failed", "node", n.cfg.Name)
			}
		case <-status.C:
			if err := n.reportStatus(ctx); err != nil && ctx.Err() == nil {
				n.cfg.Log.Error(err, "Updating node status failed", "node", n.cfg.Name)
			}
		}
	}
}

func (n *Node) renewLease(ctx context.Context) error {
	leases := n.cfg.Client.CoordinationV1().Leases(leaseNamespace)
	now := metav1.NewMicroTime(time.Now())
	lease, err := leases.Get(ctx, n.cfg.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: n.cfg.Name, Namespace: leaseNamespace},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(n.cfg.Name),
				LeaseDurationSeconds: ptr.To(int32(leaseDuration.Seconds())), RenewTime: &now},
		}, metav1.CreateOptions{})
		return wrap(err, "creating node lease")
	}
	if err != nil {
		return wrap(err, "reading node lease")
	}
	lease.Spec.RenewTime = &now
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return wrap(err, "renewing node lease")
}

// reportStatus writes the node status on the latest object, retrying conflicts with controllers that
// add taints or annotations meanwhile.
func (n *Node) reportStatus(ctx context.Context) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := n.cfg.Client.CoreV1().Nodes().Get(ctx, n.cfg.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return n.updateStatus(ctx, node)
	})
}

// updateStatus reports the node Ready with its capacity and the bridge address (the pods' host IP).
func (n *Node) updateStatus(ctx context.Context, node *corev1.Node) error {
	now := metav1.Now()
	condition := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		c := corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
		for _, old := range node.Status.Conditions {
			if old.Type == t && old.Status == s {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		return c
	}
	node.Status.Capacity, node.Status.Allocatable = capacity(), capacity()
	node.Status.Conditions = []corev1.NodeCondition{
		condition(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
		condition(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
		condition(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
		condition(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
	}
	node.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: n.cfg.Network.Gateway.String()},
		{Type: corev1.NodeHostName, Address: n.cfg.Name},
	}
	node.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: "v1.37.0-localseed", OperatingSystem: "linux",
		Architecture: node.Labels[corev1.LabelArchStable], ContainerRuntimeVersion: "localseed://processes"}
	_, err := n.cfg.Client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}

func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
