package etcd

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// render renders the pod template of a defaulted Etcd with the given druid images.
func render(g Gomega, replicas int32, images config.Images) *statefulset.Rendered {
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"}, Spec: druidv1alpha1.EtcdSpec{Replicas: replicas}}
	druidv1alpha1.SetDefaults(etcd)
	rendered, err := statefulset.Render(context.Background(), nil, images, config.LocalBackup{}, etcd)
	g.Expect(err).NotTo(HaveOccurred())
	return rendered
}

func TestPendingStoppingUpdate(t *testing.T) {
	g := NewWithT(t)
	v1 := config.Images{EtcdWrapper: "example.org/etcd-wrapper:v1", BackupRestore: "example.org/etcdbrctl:v1"}
	v2wrapper := config.Images{EtcdWrapper: "example.org/etcd-wrapper:v2", BackupRestore: "example.org/etcdbrctl:v1"}
	running := func(replicas int32, images config.Images) *appsv1.StatefulSet {
		sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 7}}
		sts.Spec.Replicas = ptr.To(replicas)
		sts.Spec.Template.Spec.Containers = []corev1.Container{{Name: "etcd", Image: images.EtcdWrapper}, {Name: "backup-restore", Image: images.BackupRestore}}
		return sts
	}

	_, pending := pendingStoppingUpdate(running(3, v1), render(g, 3, v1), 3, 2)
	g.Expect(pending).To(BeFalse(), "nothing changes")
	_, pending = pendingStoppingUpdate(running(3, v1), render(g, 5, v1), 5, 2)
	g.Expect(pending).To(BeFalse(), "a scale-up stops no member")

	u, pending := pendingStoppingUpdate(running(3, v1), render(g, 0, v1), 0, 2)
	g.Expect(pending).To(BeTrue())
	g.Expect(u.hibernation).To(BeTrue())
	g.Expect(u.what).To(Equal("scaling from 3 to 0 replicas (hibernation)"))
	g.Expect(u.key).To(HavePrefix("etcd-generation=2,statefulset-generation=7,replicas=0,pod-template="))

	u, pending = pendingStoppingUpdate(running(3, v1), render(g, 3, v2wrapper), 3, 2)
	g.Expect(pending).To(BeTrue())
	g.Expect(u.hibernation).To(BeFalse())
	g.Expect(u.what).To(Equal("changing the etcd image from example.org/etcd-wrapper:v1 to example.org/etcd-wrapper:v2"))

	_, pending = pendingStoppingUpdate(running(0, v1), render(g, 3, v2wrapper), 3, 2)
	g.Expect(pending).To(BeFalse(), "hibernated: no member runs, new images and the wake-up need no snapshot")

	other := running(3, v1)
	other.Generation = 9
	again, _ := pendingStoppingUpdate(other, render(g, 0, v1), 0, 2)
	first, _ := pendingStoppingUpdate(running(3, v1), render(g, 0, v1), 0, 2)
	g.Expect(again.key).NotTo(Equal(first.key), "a later update to the same target is another update")
}

func TestSnapshotRetriesBackOff(t *testing.T) {
	g := NewWithT(t)
	var r snapshotRetries
	key := types.NamespacedName{Namespace: "shoot", Name: "etcd-main"}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const update = "etcd-generation=2,statefulset-generation=7,replicas=0,pod-template=a"
	g.Expect(r.wait(key, update, now)).To(BeZero())
	g.Expect(r.failed(key, update, now)).To(Equal(retryBaseDelay))
	g.Expect(r.wait(key, update, now)).To(Equal(retryBaseDelay))
	g.Expect(r.failed(key, update, now)).To(Equal(2 * retryBaseDelay))
	for range 40 {
		r.failed(key, update, now)
	}
	g.Expect(r.wait(key, update, now)).To(Equal(retryMaxDelay))
	g.Expect(r.wait(key, "another update", now)).To(BeZero(), "another update asks at once")
	r.forget(key)
	g.Expect(r.wait(key, update, now)).To(BeZero())
}

// Refusals are counted from the first of a row; any other failure starts the row anew.
func TestSnapshotRetriesCountRefusalsInARow(t *testing.T) {
	g := NewWithT(t)
	var r snapshotRetries
	key := types.NamespacedName{Namespace: "shoot", Name: "etcd-main"}
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const update = "etcd-generation=2,statefulset-generation=7,replicas=0,pod-template=a"
	since, n, _ := r.refused(key, update, t0)
	g.Expect(since).To(Equal(t0))
	g.Expect(n).To(Equal(1))
	since, n, _ = r.refused(key, update, t0.Add(time.Minute))
	g.Expect(since).To(Equal(t0))
	g.Expect(n).To(Equal(2))
	r.failed(key, update, t0.Add(2*time.Minute))
	since, n, _ = r.refused(key, update, t0.Add(3*time.Minute))
	g.Expect(since).To(Equal(t0.Add(3 * time.Minute)))
	g.Expect(n).To(Equal(1))
}

// The refusal grace is measured from the first refusal of the update that is pending now: an update
// refused twice and then withdrawn (the shoot woke up again) leaves nothing behind, so a hibernation days
// later is refused once, not three times in a row since days, and waits for its own grace and refusals
// before it goes ahead without a snapshot.
func TestSnapshotRetriesCountRefusalsOfThePendingUpdateOnly(t *testing.T) {
	g := NewWithT(t)
	var r snapshotRetries
	key := types.NamespacedName{Namespace: "shoot", Name: "etcd-main"}
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const withdrawn = "etcd-generation=2,statefulset-generation=7,replicas=0,pod-template=a"
	const later = "etcd-generation=4,statefulset-generation=7,replicas=0,pod-template=a"
	r.refused(key, withdrawn, t0)
	r.refused(key, withdrawn, t0.Add(time.Minute))

	days := t0.Add(72 * time.Hour)
	g.Expect(r.wait(key, later, days)).To(BeZero())
	since, n, retryIn := r.refused(key, later, days)
	g.Expect(since).To(Equal(days))
	g.Expect(n).To(Equal(1))
	g.Expect(retryIn).To(Equal(retryBaseDelay), "the back-off starts anew as well")
}
