//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdops"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// restoredRole names the restored Etcd for the seed workflow's helpers, which address an Etcd as
// etcd-<role>: etcd-main-restored.
const restoredRole = "main-restored"

// After a bad write, an operator restores etcd-main's backups up to the revision R before it into a new
// 3-member Etcd with `gardener-etcd etcd restore-to-revision --issue-certificates` (its etcdops code path):
// the new members get server and peer certificates for their own names from the CAs that signed
// etcd-main's, reach each other under Gardener's network policies, and hold exactly the keyspace of
// revision R — every key, value and revision of R, nothing written after it. A writer records the
// acknowledged writes throughout: none of those up to R is missing in the new Etcd, none is lost in
// etcd-main, which, like its backups, the restore does not touch. Deleting the new Etcd deletes the
// certificates issued for it.
var _ = Describe("restore.to.revision", func() {
	It("restores etcd-main's backups up to revision R into a new 3-member Etcd holding exactly R's keys", func(ctx SpecContext) {
		env := newShoot(ctx, "restore-revision", fastDeltaSnapshots)
		measure("bootstrap etcd-main (3 members)", func() { deployMain(ctx, env, 3) })
		DeferCleanup(func(ctx SpecContext) { destroyRestored(ctx, env) }, NodeTimeout(8*time.Minute))

		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/restore/w/")
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", 100))
		cli, err := seedworkflow.EtcdClient(ctx, env, etcd.RoleMain)
		Expect(err).NotTo(HaveOccurred())
		defer cli.Close()
		for i := range 20 {
			_, err := cli.Put(ctx, fmt.Sprintf("/e2e/restore/data/key-%02d", i), fmt.Sprintf("good value %d", i))
			Expect(err).NotTo(HaveOccurred())
		}
		// Every write acknowledged before the marker was sent has a lower revision than the marker's, R.
		ackedBeforeR := w.Acked()
		marker, err := cli.Put(ctx, "/e2e/restore/marker", "the last good write")
		Expect(err).NotTo(HaveOccurred())
		revision := marker.Header.Revision
		atR, err := cli.Get(ctx, "/e2e/", clientv3.WithPrefix(), clientv3.WithRev(revision))
		Expect(err).NotTo(HaveOccurred())

		// The bad write: half the data keys overwritten, the other half deleted.
		var badRevision int64
		for i := range 20 {
			key := fmt.Sprintf("/e2e/restore/data/key-%02d", i)
			if i < 10 {
				resp, err := cli.Put(ctx, key, "bad value")
				Expect(err).NotTo(HaveOccurred())
				badRevision = resp.Header.Revision
			} else {
				resp, err := cli.Delete(ctx, key)
				Expect(err).NotTo(HaveOccurred())
				badRevision = resp.Header.Revision
			}
		}
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", len(ackedBeforeR)+50))
		measure("the backups hold the bad write", func() { expectDeltaBeyond(ctx, env, badRevision) })

		source := getEtcd(ctx, env, etcd.RoleMain)
		sourcePrefix := source.Spec.Backup.Store.Prefix
		newPrefix := sourcePrefix + "-restored"
		sourceBackups := backupObjects(ctx, env, sourcePrefix)
		Expect(sourceBackups).NotTo(BeEmpty())
		sourceSecrets := &corev1.SecretList{}
		Expect(env.Client.List(ctx, sourceSecrets, client.InNamespace(env.Namespace))).To(Succeed())

		var restored *etcdops.RestoredEtcd
		created := time.Now()
		restored, err = etcdops.RestoreToRevision(ctx, env.Client, types.NamespacedName{Namespace: env.Namespace, Name: source.Name},
			etcdops.PointInTimeRestore{Name: etcd.Name(restoredRole), Prefix: newPrefix, Revision: revision, IssueCertificates: true}, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(restored.Certificates).To(HaveLen(2), "the server and the peer certificate")
		measure("restore-to-revision → 3 members Ready", func() {
			Expect(seedworkflow.WaitMembers(ctx, env, restoredRole, 3, true)).To(Succeed())
			expectCondition(ctx, env, restoredRole, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, "")
		})
		toReady := time.Since(created).Round(time.Second)

		restoredCli, err := seedworkflow.EtcdClient(ctx, env, restoredRole)
		Expect(err).NotTo(HaveOccurred())
		defer restoredCli.Close()
		got, err := restoredCli.Get(ctx, "/e2e/", clientv3.WithPrefix())
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Header.Revision).To(BeNumerically(">=", revision))
		Expect(keyValues(got.Kvs)).To(Equal(keyValues(atR.Kvs)), "the new Etcd holds exactly the keyspace of revision %d", revision)
		expectKeysOnEveryMember(ctx, env, restoredRole, "/e2e/restore/w/", 3, ackedBeforeR)
		for i := range 20 {
			key := fmt.Sprintf("/e2e/restore/data/key-%02d", i)
			resp, err := restoredCli.Get(ctx, key)
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.Kvs).To(HaveLen(1), "%s is back", key)
			Expect(string(resp.Kvs[0].Value)).To(Equal(fmt.Sprintf("good value %d", i)))
		}
		Expect(backupKeysOf(backupObjects(ctx, env, newPrefix))).To(ContainElement(ContainSubstring(fmt.Sprintf("Full-00000000-%08d-", revision))),
			"the new Etcd's first full snapshot, at revision %d, is under its own prefix", revision)

		acked, failures, gap := w.Stop()
		writerKeysAtR := 0
		for _, kv := range atR.Kvs {
			if strings.HasPrefix(string(kv.Key), "/e2e/restore/w/") {
				writerKeysAtR++
			}
		}
		AddReportEntry("restore to revision", fmt.Sprintf("revision %d (bad write up to %d): %d keys at R restored into 3 members, Ready %s after creation; writer %d acknowledged (%d up to R, %d after, none of them in the new Etcd), %d failed, longest gap %s; certificates %s",
			revision, badRevision, len(atR.Kvs), toReady, len(acked), writerKeysAtR, len(acked)-writerKeysAtR, failures, gap, certificateNames(restored)))
		fmt.Fprintf(GinkgoWriter, "restore to revision %d: %d keys at R; Ready %s after creation; writer %d acknowledged (%d up to R), %d failed\n",
			revision, len(atR.Kvs), toReady, len(acked), writerKeysAtR, failures)

		By("etcd-main, its backups and its secrets are untouched, and it lost no acknowledged write")
		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/restore/w/", 3, acked)
		for i := range 20 {
			resp, err := cli.Get(ctx, fmt.Sprintf("/e2e/restore/data/key-%02d", i))
			Expect(err).NotTo(HaveOccurred())
			if i < 10 {
				Expect(resp.Kvs).To(HaveLen(1))
				Expect(string(resp.Kvs[0].Value)).To(Equal("bad value"), "etcd-main keeps its own history")
			} else {
				Expect(resp.Kvs).To(BeEmpty())
			}
		}
		Expect(backupObjects(ctx, env, sourcePrefix)).To(ContainElements(sourceBackups), "every backup of etcd-main is still there, same size")
		for _, s := range sourceSecrets.Items {
			after := &corev1.Secret{}
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(&s), after)).To(Succeed())
			Expect(after.Data).To(Equal(s.Data), "secret %s", s.Name)
		}
		Expect(getEtcd(ctx, env, etcd.RoleMain).Spec).To(Equal(source.Spec))

		By("deleting the new Etcd deletes the certificates issued for it")
		destroyRestored(ctx, env)
		for _, cert := range restored.Certificates {
			Eventually(func() bool {
				return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(cert.Secret), &corev1.Secret{}))
			}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeTrue(), "secret %s", cert.Secret.Name)
		}
	})
})

// destroyRestored deletes the restored Etcd as the Gardener side deletes one and waits until druid removed
// it; a failed spec keeps its pods' logs first.
func destroyRestored(ctx context.Context, env *seedworkflow.Env) {
	if CurrentSpecReport().Failed() {
		printEtcdStatusOf(ctx, env, restoredRole)
		keepLogs(seed.StateDir(), seed.PodLogDirs(env.Namespace))
	}
	c := seedworkflow.Component(env, restoredRole)
	Expect(c.Destroy(ctx)).To(Succeed())
	Expect(c.WaitCleanup(ctx)).To(Succeed())
}

// printEtcdStatusOf prints the conditions and last errors of the Etcd of role.
func printEtcdStatusOf(ctx context.Context, env *seedworkflow.Env, role string) {
	fmt.Fprintf(GinkgoWriter, "%s\n", seedworkflow.EtcdLine(ctx, env, role))
	obj := &druidv1alpha1.Etcd{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: etcd.Name(role)}, obj); err != nil {
		fmt.Fprintf(GinkgoWriter, "  %v\n", err)
		return
	}
	for _, c := range obj.Status.Conditions {
		fmt.Fprintf(GinkgoWriter, "  %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, e := range obj.Status.LastErrors {
		fmt.Fprintf(GinkgoWriter, "  last error %s: %s\n", e.Code, e.Description)
	}
}

// keyValue is what a restore must reproduce of a key: its value and its revisions.
type keyValue struct {
	Value                       string
	CreateRevision, ModRevision int64
	Version                     int64
}

func keyValues(kvs []*mvccpb.KeyValue) map[string]keyValue {
	out := make(map[string]keyValue, len(kvs))
	for _, kv := range kvs {
		out[string(kv.Key)] = keyValue{Value: string(kv.Value), CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision, Version: kv.Version}
	}
	return out
}

// backupObjects are the objects of the shoot's bucket below prefix/.
func backupObjects(ctx context.Context, env *seedworkflow.Env, prefix string) []seedworkflow.BackupObject {
	objects, err := seedworkflow.ListBackups(ctx, env)
	Expect(err).NotTo(HaveOccurred())
	var out []seedworkflow.BackupObject
	for _, o := range objects {
		if strings.HasPrefix(o.Key, strings.TrimSuffix(prefix, "/")+"/") {
			out = append(out, o)
		}
	}
	return out
}

func backupKeysOf(objects []seedworkflow.BackupObject) []string {
	keys := make([]string, 0, len(objects))
	for _, o := range objects {
		keys = append(keys, o.Key)
	}
	return keys
}

func certificateNames(r *etcdops.RestoredEtcd) string {
	var names []string
	for _, c := range r.Certificates {
		names = append(names, fmt.Sprintf("%s (from %s, CA %s)", c.Secret.Name, c.From, c.CASecret))
	}
	return strings.Join(names, ", ")
}
