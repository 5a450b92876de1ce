package apis

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// TestEtcdStatusRoundTrip writes a status with every field set through the status subresource and reads
// it back unchanged: druid's status (members, conditions, lastErrors, bootstrapWithExistingCluster, …) must survive pruning.
func TestEtcdStatusRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	etcd := exampleEtcd(t)
	g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())

	now := metav1.Now().Rfc3339Copy()
	etcd.Status = druidv1alpha1.EtcdStatus{
		ObservedGeneration: ptr.To(etcd.Generation),
		Etcd:               &druidv1alpha1.CrossVersionObjectReference{Kind: "StatefulSet", Name: etcd.Name, APIVersion: "apps/v1"},
		Conditions: []druidv1alpha1.Condition{{
			Type: druidv1alpha1.ConditionTypeReady, Status: druidv1alpha1.ConditionTrue, Reason: druidv1alpha1.ReasonQuorate,
			Message: "The majority of ETCD members is ready", LastTransitionTime: now, LastUpdateTime: now,
		}},
		LastErrors: []druidv1alpha1.LastError{{Code: "ERR_SYNC_STATEFULSET", Description: "conflict", ObservedAt: now}},
		LastOperation: &druidv1alpha1.LastOperation{
			Type: druidv1alpha1.LastOperationTypeReconcile, State: druidv1alpha1.LastOperationStateRequeue,
			Description: "waiting for peer TLS", RunID: "7a4b", LastUpdateTime: now,
		},
		CurrentReplicas: 1, Replicas: 1, ReadyReplicas: 1,
		Ready: ptr.To(true),
		Members: []druidv1alpha1.EtcdMemberStatus{{
			Name: "etcd-main-0", ID: ptr.To("8e9e05c52164694d"), Role: ptr.To(druidv1alpha1.EtcdRoleLeader),
			Status: druidv1alpha1.EtcdMemberStatusReady, Reason: druidv1alpha1.MemberReasonLeaseSucceeded, LastTransitionTime: now,
		}},
		PeerUrlTLSEnabled: ptr.To(false),
		Selector:          ptr.To("app.kubernetes.io/managed-by=etcd-druid,app.kubernetes.io/part-of=etcd-main"),
		BootstrapWithExistingCluster: &druidv1alpha1.BootstrapWithExistingClusterStatus{JoinedAt: now,
			Members: []druidv1alpha1.BootstrapJoinedMember{{Name: "old-0", PeerURLs: []string{"https://old-0:2380"}}}},
	}
	want := etcd.Status.DeepCopy()
	g.Expect(env.Client.Status().Update(ctx, etcd)).To(Succeed())

	got := &druidv1alpha1.Etcd{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), got)).To(Succeed())
	g.Expect(toJSON(t, got.Status)).To(MatchJSON(toJSON(t, want)))
}

// TestBackupEntryStatusRoundTrip checks the extension status parts and our etcdBackupSecretRef.
func TestBackupEntryStatusRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	entry := readExample(t, "backupentry.yaml", &extensionsv1alpha1.BackupEntry{})
	entry.Name = "shoot--status--roundtrip"
	g.Expect(env.Client.Create(ctx, entry)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, entry) })

	now := metav1.Now().Rfc3339Copy()
	entry.Status.LastOperation = &extensionsv1alpha1.LastOperation{
		Type: extensionsv1alpha1.LastOperationTypeReconcile, State: extensionsv1alpha1.LastOperationStateSucceeded,
		Progress: 100, Description: "etcd backup secret written", LastUpdateTime: now,
	}
	entry.Status.LastError = &extensionsv1alpha1.LastError{Description: "earlier failure", Codes: []extensionsv1alpha1.ErrorCode{"ERR_INFRA_UNAUTHORIZED"}, LastUpdateTime: &now}
	entry.Status.ObservedGeneration = entry.Generation
	entry.Status.EtcdBackupSecretRef = &corev1.SecretReference{Name: "etcd-backup", Namespace: "shoot--status--roundtrip"}
	want := entry.Status.DeepCopy()
	g.Expect(env.Client.Status().Update(ctx, entry)).To(Succeed())

	got := &extensionsv1alpha1.BackupEntry{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(entry), got)).To(Succeed())
	g.Expect(toJSON(t, got.Status)).To(MatchJSON(toJSON(t, want)))
}
