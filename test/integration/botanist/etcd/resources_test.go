package etcd_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

func requests(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// The requests of both containers follow the class (main: important, events: normal), and every Deploy
// writes them again, as gardenlet does: requests someone set on the object do not survive (the VPA scales
// the pods' requests, never the Etcd's).
func TestDeployRequestsResourcesByClass(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	g.Expect(etcd.New(env.Client, s.namespace, s.mainValues()).Deploy(ctx)).To(Succeed())
	g.Expect(etcd.New(env.Client, s.namespace, values(etcd.RoleEvents)).Deploy(ctx)).To(Succeed())

	main := getEtcd(g, s.namespace, "etcd-main")
	g.Expect(main.Spec.Etcd.Resources.Requests).To(BeComparableTo(requests("cpu", "150m", "memory", "500M")))
	g.Expect(main.Spec.Etcd.Resources.Limits).To(BeEmpty())
	g.Expect(main.Spec.Backup.Resources.Requests).To(BeComparableTo(requests("cpu", "20m", "memory", "80Mi")))
	events := getEtcd(g, s.namespace, "etcd-events")
	g.Expect(events.Spec.Etcd.Resources.Requests).To(BeComparableTo(requests("cpu", "30m", "memory", "150M")))
	g.Expect(events.Spec.Backup.Resources.Requests).To(BeComparableTo(requests("cpu", "10m", "memory", "40Mi")))

	// An explicit class wins over the role's.
	important := values(etcd.RoleEvents)
	important.Class = etcd.ClassImportant
	other := env.CreateNamespace(t)
	g.Expect(etcd.New(env.Client, other, important).Deploy(ctx)).To(Succeed())
	g.Expect(getEtcd(g, other, "etcd-events").Spec.Etcd.Resources.Requests).To(BeComparableTo(requests("cpu", "150m", "memory", "500M")))

	// Resources someone set on the object are put back.
	patch := client.MergeFrom(main.DeepCopy())
	main.Spec.Etcd.Resources = &corev1.ResourceRequirements{Requests: requests("cpu", "1", "memory", "2Gi")}
	main.Spec.Backup.Resources = &corev1.ResourceRequirements{Requests: requests("cpu", "50m")}
	g.Expect(env.Client.Patch(ctx, main, patch)).To(Succeed())
	g.Expect(etcd.New(env.Client, s.namespace, s.mainValues()).Deploy(ctx)).To(Succeed())
	kept := getEtcd(g, s.namespace, "etcd-main")
	g.Expect(kept.Spec.Etcd.Resources.Requests).To(BeComparableTo(requests("cpu", "150m", "memory", "500M")))
	g.Expect(kept.Spec.Backup.Resources.Requests).To(BeComparableTo(requests("cpu", "20m", "memory", "80Mi")))
}
