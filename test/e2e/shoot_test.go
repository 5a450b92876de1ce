//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// fastDeltaSnapshots is the delta snapshot period of scenarios that wait for a delta snapshot or for
// BackupReady to turn False (three periods without a snapshot); Gardener's five minutes would make them
// wait for a quarter of an hour.
const fastDeltaSnapshots = 10 * time.Second

// newShoot creates the shoot namespace shoot--e2e--<name> with its BackupEntry on the suite's seed and
// registers its removal (shootEnv).
func newShoot(ctx context.Context, name string, deltaSnapshotPeriod time.Duration) *seedworkflow.Env {
	env := shootEnv(name, deltaSnapshotPeriod)
	_, err := seedworkflow.CreateShoot(ctx, env)
	Expect(err).NotTo(HaveOccurred())
	return env
}

// shootEnv is the environment of shoot--e2e--<name>, not created yet, with its removal registered: the Etcds
// are destroyed (their pods stop, which frees the two cores for the next scenario) and the namespace and
// BackupEntry deleted. A failed scenario first prints its pods' logs.
func shootEnv(name string, deltaSnapshotPeriod time.Duration) *seedworkflow.Env {
	env := *base
	env.Namespace = "shoot--e2e--" + name
	env.BackupEntryName = ""
	env.WrittenRevision = 0
	env.DeltaSnapshotPeriod = deltaSnapshotPeriod
	DeferCleanup(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			printPodLogs(env.Namespace)
			printEtcdStatus(ctx, &env)
			// The kubelets delete a pod's logs with the pod, so the whole files are kept before removeShoot.
			keepLogs(seed.StateDir(), seed.PodLogDirs(env.Namespace))
		}
		removeShoot(ctx, &env)
	}, NodeTimeout(8*time.Minute))
	return &env
}

// removeShoot destroys both Etcds (botanist), waits until druid removed them, and deletes the BackupEntry
// and the namespace without waiting for them.
func removeShoot(ctx context.Context, env *seedworkflow.Env) {
	for _, role := range []string{etcd.RoleMain, etcd.RoleEvents} {
		c := seedworkflow.Component(env, role)
		Expect(c.Destroy(ctx)).To(Succeed())
		Expect(c.WaitCleanup(ctx)).To(Succeed())
	}
	entry := &extensionsv1alpha1.BackupEntry{ObjectMeta: metav1.ObjectMeta{Name: env.BackupEntryName}}
	Expect(client.IgnoreNotFound(env.Client.Delete(ctx, entry))).To(Succeed())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: env.Namespace}}
	Expect(client.IgnoreNotFound(env.Client.Delete(ctx, ns))).To(Succeed())
}

// deployMain deploys etcd-main through botanist with replicas members from scratch (peer TLS when more
// than one), backed up to the shoot's BackupEntry, and waits until druid reports every member ready.
func deployMain(ctx context.Context, env *seedworkflow.Env, replicas int32) {
	values := etcd.Values{Role: etcd.RoleMain, Replicas: ptr.To(replicas), HighAvailability: replicas > 1,
		BackupConfig: &etcd.BackupConfig{BackupEntryName: env.BackupEntryName}, DeltaSnapshotPeriod: env.DeltaSnapshotPeriod,
		WaitTimeout: env.Timeout, WaitInterval: env.Interval}
	c := etcd.New(env.Client, env.Namespace, values)
	Expect(c.Deploy(ctx)).To(Succeed())
	Expect(c.Wait(ctx)).To(Succeed())
	Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, int(replicas), replicas > 1)).To(Succeed())
}

// getEtcd reads the Etcd of role.
func getEtcd(ctx context.Context, env *seedworkflow.Env, role string) *druidv1alpha1.Etcd {
	obj := &druidv1alpha1.Etcd{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: etcd.Name(role)}, obj)).To(Succeed())
	return obj
}

// lastSnapshots are the Etcd's last full and delta snapshots as druid reads them: from the snapshot leases
// (and the StatefulSet's record of the full snapshot before an update), health.LastSnapshots.
func lastSnapshots(ctx context.Context, env *seedworkflow.Env, role string) (full, delta *druidv1alpha1.SnapshotStatus) {
	obj := getEtcd(ctx, env, role)
	o := health.Observed{Etcd: obj}
	get := func(name string, into client.Object) bool {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: name}, into)
		Expect(client.IgnoreNotFound(err)).NotTo(HaveOccurred())
		return err == nil
	}
	if sts := (&appsv1.StatefulSet{}); get(druidv1alpha1.StatefulSetName(obj), sts) {
		o.StatefulSet = sts
	}
	if l := (&coordinationv1.Lease{}); get(druidv1alpha1.FullSnapshotLeaseName(obj), l) {
		o.SnapshotLeases.Full = l
	}
	if l := (&coordinationv1.Lease{}); get(druidv1alpha1.DeltaSnapshotLeaseName(obj), l) {
		o.SnapshotLeases.Delta = l
	}
	return health.LastSnapshots(o)
}

// recordedClusterSize is the cluster size druid recorded on the Etcd's StatefulSet
// (druidv1alpha1.ClusterSizeAnnotation); nil when it recorded none.
func recordedClusterSize(ctx context.Context, env *seedworkflow.Env, role string) *int32 {
	sts := &appsv1.StatefulSet{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: etcd.Name(role)}, sts)).To(Succeed())
	size, ok := druidv1alpha1.AnnotatedClusterSize(sts.Annotations)
	if !ok {
		return nil
	}
	return &size
}

// expectCondition waits until the Etcd of role has condition t with status (and reason, unless empty).
func expectCondition(ctx context.Context, env *seedworkflow.Env, role string, t druidv1alpha1.ConditionType, status druidv1alpha1.ConditionStatus, reason string) *druidv1alpha1.Condition {
	return expectConditionWithin(ctx, env, waitTimeout, role, t, status, reason)
}

// expectConditionWithin is expectCondition with its own timeout.
func expectConditionWithin(ctx context.Context, env *seedworkflow.Env, timeout time.Duration, role string, t druidv1alpha1.ConditionType, status druidv1alpha1.ConditionStatus, reason string) *druidv1alpha1.Condition {
	var got *druidv1alpha1.Condition
	Eventually(func(g Gomega) {
		obj := &druidv1alpha1.Etcd{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: etcd.Name(role)}, obj)).To(Succeed())
		got = druidv1alpha1.FindCondition(obj.Status.Conditions, t)
		g.Expect(got).NotTo(BeNil(), "no condition %s", t)
		g.Expect(got.Status).To(Equal(status), "condition %s: %s", t, got.Message)
		if reason != "" {
			g.Expect(got.Reason).To(Equal(reason), "condition %s: %s", t, got.Message)
		}
	}).WithContext(ctx).WithTimeout(timeout).WithPolling(pollInterval).Should(Succeed())
	return got
}

// printEtcdStatus prints the Etcds' status of a failed scenario.
func printEtcdStatus(ctx context.Context, env *seedworkflow.Env) {
	for _, role := range []string{etcd.RoleMain, etcd.RoleEvents} {
		fmt.Fprintf(GinkgoWriter, "%s\n", seedworkflow.EtcdLine(ctx, env, role))
		obj := &druidv1alpha1.Etcd{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: etcd.Name(role)}, obj); err != nil {
			if !apierrors.IsNotFound(err) {
				fmt.Fprintf(GinkgoWriter, "  %v\n", err)
			}
			continue
		}
		for _, c := range obj.Status.Conditions {
			fmt.Fprintf(GinkgoWriter, "  %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
		for _, e := range obj.Status.LastErrors {
			fmt.Fprintf(GinkgoWriter, "  last error %s: %s\n", e.Code, e.Description)
		}
	}
}

// printPodLogs prints the tail of every container log of the namespace's pods and of druid.
func printPodLogs(namespace string) {
	for _, ns := range []string{namespace, seedworkflow.GardenNamespace} {
		for _, dir := range seed.PodLogDirs(ns) {
			_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
				if err != nil || info.IsDir() {
					return nil
				}
				data, _ := os.ReadFile(path)
				if len(data) > 4000 {
					data = data[len(data)-4000:]
				}
				fmt.Fprintf(GinkgoWriter, "---- %s\n%s\n", path, data)
				return nil
			})
		}
	}
}
