//go:build e2e

package e2e

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Scenario: a control-plane migration, from one shoot namespace and bucket to another, as if to
// another seed. The source's etcd-main takes writes; the writer stops (gardenlet scales kube-apiserver down);
// the source seed's part takes a final full snapshot, migrates and deletes the BackupEntry and destroys the
// Etcds. The destination's part creates the shoot's BackupEntry in its own bucket (restore operation) and the
// `source-` entry on the source bucket, copies the backups with an EtcdCopyBackupsTask that waits for the
// final snapshot, and deploys the Etcds: etcd-main restores from the copy, at the source's last revision,
// with every acknowledged write. The source's backups stay in its bucket throughout.
var _ = Describe("control-plane migration", func() {
	It("moves etcd-main to another namespace and bucket with every acknowledged write", func(ctx SpecContext) {
		src := newShoot(ctx, "migration-src", 0)
		measure("bootstrap the source (1 member)", func() { deployMain(ctx, src, 1) })
		_, err := seedworkflow.WriteData(ctx, src, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())
		w := seedworkflow.StartWriter(ctx, src, etcd.RoleMain, "/e2e/migration/")
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", 50))
		acked, failures, _ := w.Stop()
		AddReportEntry("writes before the migration", fmt.Sprintf("%d acknowledged, %d failed", len(acked), failures))
		revision := clusterRevision(ctx, src)

		var source seedworkflow.MigrationSource
		measure("migrate (source seed)", func() {
			var detail string
			source, detail, err = seedworkflow.MigrateShoot(ctx, src)
			Expect(err).NotTo(HaveOccurred())
			fmt.Fprintln(GinkgoWriter, detail)
		})
		sourcePrefix := source.BackupEntryName + "/" + etcd.Name(etcd.RoleMain) + "/"
		finalSnapshot := fmt.Sprintf("Full-00000000-%08d-", revision)
		sourceBackups := backupKeys(ctx, src, source.BucketName, sourcePrefix)
		Expect(sourceBackups).To(ContainElement(SatisfyAll(ContainSubstring(finalSnapshot), HaveSuffix(".final"))),
			"the source bucket holds a final full snapshot at the cluster's revision %d", revision)
		Expect(src.Client.Get(ctx, client.ObjectKey{Name: src.BackupEntryName}, &extensionsv1alpha1.BackupEntry{})).
			To(Satisfy(apierrors.IsNotFound), "the migrated BackupEntry is deleted")
		claims := &corev1.PersistentVolumeClaimList{}
		Expect(src.Client.List(ctx, claims, client.InNamespace(src.Namespace))).To(Succeed())
		Expect(claims.Items).To(HaveLen(1), "the source's volume is kept")

		dst := shootEnv("migration-dst", 0)
		dst.BucketName = "e2e-migration-dst"
		dst.BackupEntryName = dst.Namespace + "--" + shootUID(source.BackupEntryName)
		measure("restore (destination seed)", func() {
			detail, err := seedworkflow.RestoreShoot(ctx, dst, source)
			Expect(err).NotTo(HaveOccurred())
			fmt.Fprintln(GinkgoWriter, detail)
		})
		Expect(clusterRevision(ctx, dst)).To(Equal(revision), "restored at the revision of the final snapshot")
		expectKeysOnEveryMember(ctx, dst, etcd.RoleMain, "/e2e/migration/", 1, acked)
		_, err = seedworkflow.CheckData(ctx, dst, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())

		Expect(backupKeys(ctx, dst, dst.Bucket(), dst.BackupEntryName+"/"+etcd.Name(etcd.RoleMain)+"/")).
			To(ContainElement(ContainSubstring(finalSnapshot)), "the copy is in the destination bucket")
		sourceEntry := backupentry.SourcePrefix + dst.BackupEntryName
		Expect(dst.Client.Get(ctx, client.ObjectKey{Name: sourceEntry}, &extensionsv1alpha1.BackupEntry{})).
			To(Satisfy(apierrors.IsNotFound), "the source entry is released after the restore")
		Expect(entryEventReasons(ctx, dst, sourceEntry)).To(SatisfyAll(ContainElement("MigrateSucceeded"), Not(ContainElement("DeleteSucceeded"))),
			"the source entry was migrated, so its deletion ran no Delete operation")
		Expect(backupKeys(ctx, src, source.BucketName, sourcePrefix)).To(ContainElements(sourceBackups),
			"releasing the source entry kept the source's backups")

		// gardenlet retries flows: both parts run again after they completed change nothing.
		again, _, err := seedworkflow.MigrateShoot(ctx, src)
		Expect(err).NotTo(HaveOccurred(), "migrating again")
		Expect(again).To(Equal(source))
		_, err = seedworkflow.RestoreShoot(ctx, dst, source)
		Expect(err).NotTo(HaveOccurred(), "restoring again")
		Expect(clusterRevision(ctx, dst)).To(Equal(revision), "a repeated restore deploys no second copy")
		expectKeysOnEveryMember(ctx, dst, etcd.RoleMain, "/e2e/migration/", 1, acked)
	})
})

// entryEventReasons lists the reasons of the events about a (cluster-scoped) BackupEntry.
func entryEventReasons(ctx SpecContext, env *seedworkflow.Env, name string) []string {
	list := &corev1.EventList{}
	Expect(env.Client.List(ctx, list)).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "BackupEntry" && e.InvolvedObject.Name == name {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

// backupKeys lists the keys under prefix in bucket.
func backupKeys(ctx SpecContext, env *seedworkflow.Env, bucket, prefix string) []string {
	objects, err := seedworkflow.ListBucket(ctx, env, bucket)
	Expect(err).NotTo(HaveOccurred())
	var keys []string
	for _, o := range objects {
		if strings.HasPrefix(o.Key, prefix) {
			keys = append(keys, o.Key)
		}
	}
	return keys
}

// shootUID is the shoot UID part of a BackupEntry name, `<namespace>--<uid>`: a migrated shoot keeps it.
func shootUID(entryName string) string {
	return entryName[strings.LastIndex(entryName, "--")+2:]
}
