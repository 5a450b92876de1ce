package decide

import (
	"fmt"
	"maps"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

var (
	now = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	th  = health.Thresholds{Unknown: time.Minute, NotReady: 5 * time.Minute}
)

// cluster is a mutable picture of one Etcd as the status flow would observe it. Its stored status is
// produced by settle, i.e. by the same status computation at an earlier time, so that members carry the
// lastTransitionTime the real status flow would have given them.
type cluster struct {
	etcd     *druidv1alpha1.Etcd
	sts      *appsv1.StatefulSet
	pods     map[string]*corev1.Pod
	leases   map[int]*coordinationv1.Lease
	snapshot health.SnapshotLeases
}

// newCluster has replicas members, all renewed at now-10s with ready pods an hour old, and a StatefulSet
// at replicas.
func newCluster(replicas int32) *cluster {
	e := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot", UID: "uid-1"},
		Spec: druidv1alpha1.EtcdSpec{Replicas: replicas}}
	druidv1alpha1.SetDefaults(e)
	c := &cluster{etcd: e, pods: map[string]*corev1.Pod{}, leases: map[int]*coordinationv1.Lease{},
		sts: &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Annotations: map[string]string{}},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas)}}}
	for i := 0; i < int(replicas); i++ {
		c.renew(i, now.Add(-10*time.Second)).pod(i, true, time.Hour)
	}
	return c
}

// renew makes the sidecar of ordinal i renew its lease at t (creating the lease when missing).
func (c *cluster) renew(i int, t time.Time) *cluster {
	l := c.lease(i)
	l.Spec.HolderIdentity = ptr.To(fmt.Sprintf("%016x:cdf818194e3a8c32:Member", i+1))
	l.Spec.RenewTime = &metav1.MicroTime{Time: t}
	return c
}

// emptyLease creates the lease of ordinal i as druid does: no holder, never renewed.
func (c *cluster) emptyLease(i int) *cluster {
	l := c.lease(i)
	l.Spec = coordinationv1.LeaseSpec{}
	return c
}

func (c *cluster) lease(i int) *coordinationv1.Lease {
	if c.leases[i] == nil {
		c.leases[i] = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.MemberLeaseName(c.etcd, i), Namespace: "shoot"}}
	}
	return c.leases[i]
}

// pod sets the pod of ordinal i, created age before now.
func (c *cluster) pod(i int, ready bool, age time.Duration) *cluster {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	c.pods[druidv1alpha1.PodName(c.etcd, i)] = &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.PodName(c.etcd, i), CreationTimestamp: metav1.NewTime(now.Add(-age))},
		Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
	return c
}

// etcdContainerReady marks the etcd container of ordinal i ready while the pod stays as it is, as when
// etcd serves and only the backup-restore sidecar (which renews the lease) is down.
func (c *cluster) etcdContainerReady(i int) *cluster {
	pod := c.pods[druidv1alpha1.PodName(c.etcd, i)]
	pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses,
		corev1.ContainerStatus{Name: "etcd", Ready: true}, corev1.ContainerStatus{Name: "backup-restore", Ready: false})
	return c
}

func (c *cluster) withStore() *cluster {
	c.etcd.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderS3)}
	return c
}

// backupFailing records a full snapshot two days ago and nothing since: BackupReady is False.
func (c *cluster) backupFailing() *cluster {
	return c.snapshotsAt(now.Add(-48*time.Hour), now.Add(-48*time.Hour))
}

// snapshotsAt records the last full snapshot at full and the last delta snapshot at delta.
func (c *cluster) snapshotsAt(full, delta time.Time) *cluster {
	c.snapshot.Full = &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("100"), RenewTime: &metav1.MicroTime{Time: full}}}
	c.snapshot.Delta = &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("200"), RenewTime: &metav1.MicroTime{Time: delta}}}
	return c
}

// lose makes the members of the ordinals stop renewing at t and their pods unready, as when their etcd
// containers stopped at t; the status flow last looked at settledAt.
func (c *cluster) lose(t, settledAt time.Time, ordinals ...int) *cluster {
	for _, i := range ordinals {
		c.renew(i, t).pod(i, false, time.Hour)
	}
	return c.settle(settledAt)
}

func (c *cluster) stsReplicas(n int32) *cluster {
	c.sts.Spec.Replicas = ptr.To(n)
	return c
}

func (c *cluster) specReplicas(n int32) *cluster {
	c.etcd.Spec.Replicas = n
	return c
}

// settle stores the status the status flow computes at t from the current picture, and records the
// cluster size on the StatefulSet as the status flow does.
func (c *cluster) settle(t time.Time) *cluster {
	o := c.observed()
	c.etcd.Status = health.ComputeStatus(o, th, t)
	maps.Copy(c.sts.Annotations, health.ClusterSizeMarker(c.sts, health.NextClusterSize(o, c.etcd.Status)))
	return c
}

// storedCondition overwrites a stored condition's status, as a stale or foreign writer would leave it.
func (c *cluster) storedCondition(t druidv1alpha1.ConditionType, s druidv1alpha1.ConditionStatus) *cluster {
	for i := range c.etcd.Status.Conditions {
		if c.etcd.Status.Conditions[i].Type == t {
			c.etcd.Status.Conditions[i].Status = s
		}
	}
	return c
}

func (c *cluster) observed() health.Observed {
	o := health.Observed{Etcd: c.etcd.DeepCopy(), StatefulSet: c.sts.DeepCopy(), Pods: map[string]*corev1.Pod{}, SnapshotLeases: c.snapshot}
	for k, p := range c.pods {
		o.Pods[k] = p.DeepCopy()
	}
	for i := 0; i < 16; i++ {
		if l := c.leases[i]; l != nil {
			o.MemberLeases = append(o.MemberLeases, *l.DeepCopy())
		}
	}
	o.ClusterSize = health.RecordedClusterSize(o.Etcd, o.StatefulSet, o.MemberLeases)
	return o
}

// input is what Decide sees at now.
func (c *cluster) input() Input {
	o := c.observed()
	return Input{Observed: o, Computed: health.ComputeStatus(o, th, now), Thresholds: th, Now: now}
}
