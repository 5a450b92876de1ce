//go:build e2e

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
	s3provider "github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/s3"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Scenario: the backup credentials are rotated the way Gardener rotates them — gardenlet relays a new key
// pair into the BackupEntry's secret and has the entry reconciled, the extension rewrites the shoot's
// etcd-backup secret, the kubelet updates the mounted copy — and then the old key pair is revoked on the
// store. The sidecar picks the new keys up from its mounted secret: the next delta lands with them, no pod
// is recreated, no container restarts, and no acknowledged write is lost.
var _ = Describe("backup credential rotation", func() {
	It("keeps backing up with the new keys after the old ones are revoked, without a restart", func(ctx SpecContext) {
		env := newShoot(ctx, "key-rotation", fastDeltaSnapshots)
		users, err := seed.S3Users()
		Expect(err).NotTo(HaveOccurred())
		// The shoot starts on a user of its own, not on the seed's root keys: root cannot be revoked, so a
		// sidecar that kept using it would go unnoticed.
		Expect(users.CreateUser(ctx, "rotation-key-a", "rotation-secret-a")).To(Succeed())
		rotateEntryCredentials(ctx, env, "rotation-key-a", "rotation-secret-a")
		deployMain(ctx, env, 1)
		expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionTrue, "")
		restarts := trackRestarts(ctx, env, etcd.RoleMain)
		containerRestartsBefore := containerRestarts(ctx, env, etcd.RoleMain)
		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/key-rotation/")

		Expect(users.CreateUser(ctx, "rotation-key-b", "rotation-secret-b")).To(Succeed())
		measure("rotation: new keys in the shoot's etcd-backup secret", func() {
			rotateEntryCredentials(ctx, env, "rotation-key-b", "rotation-secret-b")
		})
		Expect(users.DeleteUser(ctx, "rotation-key-a")).To(Succeed())
		measure("old keys revoked → a delta stored with the new keys", func() {
			expectDeltaBeyond(ctx, env, clusterRevision(ctx, env))
		})
		expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionTrue, "")
		acked, failures, gap := w.Stop()
		total, perPod := restarts.stop()
		Expect(total).To(BeZero(), "member restarts during the rotation: %s", perPod)
		Expect(containerRestarts(ctx, env, etcd.RoleMain)).To(Equal(containerRestartsBefore), "container restarts during the rotation")
		AddReportEntry("key rotation writes", fmt.Sprintf("%d acknowledged, %d failed, longest gap %s", len(acked), failures, gap))
		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/key-rotation/", 1, acked)
	})
})

// rotateEntryCredentials does what gardenlet does when a seed's backup credentials change: it writes the
// new key pair into the BackupEntry's secret in the garden namespace and requests a reconcile of the entry;
// it returns once the extension wrote the keys into the shoot's etcd-backup secret.
func rotateEntryCredentials(ctx context.Context, env *seedworkflow.Env, accessKey, secretKey string) {
	entrySecret := &corev1.Secret{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: seedworkflow.GardenNamespace, Name: backupentry.EntrySecretName(env.BackupEntryName)}, entrySecret)).To(Succeed())
	patch := client.MergeFrom(entrySecret.DeepCopy())
	entrySecret.Data[s3provider.DataKeyAccessKeyID] = []byte(accessKey)
	entrySecret.Data[s3provider.DataKeySecretAccessKey] = []byte(secretKey)
	Expect(env.Client.Patch(ctx, entrySecret, patch)).To(Succeed())

	entry := &extensionsv1alpha1.BackupEntry{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Name: env.BackupEntryName}, entry)).To(Succeed())
	Expect(entry.Status.EtcdBackupSecretRef).NotTo(BeNil(), "the BackupEntry names no etcd backup secret")
	annotate := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"gardener.cloud/operation":"reconcile"}}}`))
	Expect(env.Client.Patch(ctx, entry, annotate)).To(Succeed())

	ref := entry.Status.EtcdBackupSecretRef
	Eventually(func(g Gomega) string {
		shootSecret := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, shootSecret)).To(Succeed())
		return string(shootSecret.Data[s3provider.DataKeyAccessKeyID])
	}).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Equal(accessKey))
}

// expectDeltaBeyond waits until druid reports a snapshot that holds revision rev (the backup is complete up
// to there), i.e. one stored after rev was written.
func expectDeltaBeyond(ctx context.Context, env *seedworkflow.Env, rev int64) {
	Eventually(func(g Gomega) int64 {
		_, lastDelta := lastSnapshots(ctx, env, etcd.RoleMain)
		g.Expect(lastDelta).NotTo(BeNil())
		return lastDelta.EndRevision
	}).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", rev))
}

// containerRestarts sums the restart counts of every container of role's member pods.
func containerRestarts(ctx context.Context, env *seedworkflow.Env, role string) int32 {
	pods := &corev1.PodList{}
	Expect(env.Client.List(ctx, pods, client.InNamespace(env.Namespace), client.MatchingLabels{
		druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue, druidv1alpha1.LabelPartOfKey: etcd.Name(role),
	})).To(Succeed())
	var total int32
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			total += cs.RestartCount
		}
	}
	return total
}
