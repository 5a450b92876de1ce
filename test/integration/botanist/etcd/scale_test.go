package etcd_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

func peerTLS(namespace, role string) *druidv1alpha1.PeerTLSConfig {
	return &druidv1alpha1.PeerTLSConfig{TLSConfig: druidv1alpha1.TLSConfig{
		TLSCASecretRef:     caRef("ca-etcd-peer", namespace),
		ServerTLSSecretRef: corev1.SecretReference{Name: "etcd-peer-server-" + role, Namespace: namespace},
	}}
}

func TestScaleFromOneToThreeEnablesPeerTLSAndKeepsTheRest(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	g.Expect(etcd.New(env.Client, s.namespace, s.mainValues()).Deploy(ctx)).To(Succeed())
	before := getEtcd(g, s.namespace, "etcd-main")
	g.Expect(before.Spec.Etcd.PeerUrlTLS).To(BeNil())
	g.Expect(reconcileAsDruid(ctx, clientKey(before))).To(Succeed())

	// Scale knows nothing about the backup: it must not need to.
	g.Expect(etcd.New(env.Client, s.namespace, values(etcd.RoleMain)).Scale(ctx, 3)).To(Succeed())
	after := getEtcd(g, s.namespace, "etcd-main")
	g.Expect(after.Spec.Replicas).To(Equal(int32(3)))
	g.Expect(after.Spec.Etcd.PeerUrlTLS).To(Equal(peerTLS(s.namespace, "main")))
	g.Expect(after.Spec.Annotations).To(HaveKey(etcd.PeerTLSChecksumAnnotation))
	g.Expect(after.Annotations).To(HaveKeyWithValue("gardener.cloud/operation", "reconcile"))
	g.Expect(getSecret(g, s.namespace, "etcd-peer-server-main").Data).To(HaveKey("tls.crt"))
	g.Expect(after.Spec.Backup).To(Equal(before.Spec.Backup))
	g.Expect(after.Spec.Etcd.ClientUrlTLS).To(Equal(before.Spec.Etcd.ClientUrlTLS))

	// The Gardener side never asks for an even member count (the API admits one, for Etcds of upstream druid).
	g.Expect(reconcileAsDruid(ctx, clientKey(after))).To(Succeed())
	g.Expect(etcd.New(env.Client, s.namespace, values(etcd.RoleMain)).Scale(ctx, 2)).To(MatchError(ContainSubstring("spec.replicas")))
	g.Expect(getEtcd(g, s.namespace, "etcd-main").Spec.Replicas).To(Equal(int32(3)))
}

func TestScaleOfAMissingEtcdFails(t *testing.T) {
	namespace := env.CreateNamespace(t)
	err := etcd.New(env.Client, namespace, values(etcd.RoleMain)).Scale(context.Background(), 3)
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("does not exist, deploy it first")))
}

// non-HA → HA is one Deploy: three members and peer TLS, with the peer secrets created for it.
func TestHighAvailabilityDeployCreatesThePeerSecretsAndScalesASingleMember(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	g.Expect(etcd.New(env.Client, namespace, values(etcd.RoleEvents)).Deploy(ctx)).To(Succeed())
	single := getEtcd(g, namespace, "etcd-events")
	g.Expect(single.Spec.Replicas).To(Equal(int32(1)))
	g.Expect(secretExists(namespace, "etcd-peer-server-events")).To(BeFalse())

	ha := values(etcd.RoleEvents)
	ha.HighAvailability = true
	g.Expect(etcd.New(env.Client, namespace, ha).Deploy(ctx)).To(Succeed())
	multi := getEtcd(g, namespace, "etcd-events")
	g.Expect(multi.Spec.Replicas).To(Equal(int32(3)))
	g.Expect(multi.Spec.Etcd.PeerUrlTLS).To(Equal(peerTLS(namespace, "events")))
	g.Expect(getSecret(g, namespace, "ca-etcd-peer").Data).To(HaveKey("bundle.crt"))
	g.Expect(getSecret(g, namespace, "etcd-peer-server-events").Data).To(HaveKey("tls.key"))

	// A fresh HA etcd starts with three members; explicit replicas still win.
	ha.Role, ha.Replicas = etcd.RoleMain, nil
	g.Expect(etcd.New(env.Client, namespace, ha).Deploy(ctx)).To(Succeed())
	g.Expect(getEtcd(g, namespace, "etcd-main").Spec.Replicas).To(Equal(int32(3)))
	ha.Replicas = ptr.To[int32](5)
	g.Expect(etcd.New(env.Client, namespace, ha).Deploy(ctx)).To(Succeed())
	g.Expect(getEtcd(g, namespace, "etcd-main").Spec.Replicas).To(Equal(int32(5)))

	// Dropping HA from the values does not switch peer TLS off or shrink the cluster.
	g.Expect(etcd.New(env.Client, namespace, values(etcd.RoleEvents)).Deploy(ctx)).To(Succeed())
	kept := getEtcd(g, namespace, "etcd-events")
	g.Expect(kept.Spec.Replicas).To(Equal(int32(3)))
	g.Expect(kept.Spec.Etcd.PeerUrlTLS).NotTo(BeNil())
}

// Members of a multi-member etcd spread over nodes and, with a zone failure tolerance, over zones; a single
// member carries no constraint, and scaling sets them as Deploy does.
func TestMultiMemberEtcdSpreadsOverNodesAndZones(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	v := values(etcd.RoleEvents)
	v.Zones = 3
	g.Expect(etcd.New(env.Client, namespace, v).Deploy(ctx)).To(Succeed())
	g.Expect(getEtcd(g, namespace, "etcd-events").Spec.SchedulingConstraints.TopologySpreadConstraints).To(BeEmpty())

	v.HighAvailability, v.FailureToleranceType = true, etcd.FailureToleranceTypeZone
	g.Expect(etcd.New(env.Client, namespace, v).Deploy(ctx)).To(Succeed())
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{
		"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/part-of": "etcd-events"}}
	g.Expect(getEtcd(g, namespace, "etcd-events").Spec.SchedulingConstraints.TopologySpreadConstraints).To(Equal([]corev1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule, MinDomains: ptr.To[int32](3), LabelSelector: selector},
		{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule, MinDomains: ptr.To[int32](3), LabelSelector: selector},
	}))

	// Scaling a non-HA etcd out spreads it as a best effort over nodes, strictly over zones (as Gardener
	// does without a failure tolerance type).
	main := values(etcd.RoleMain)
	main.Zones = 2
	g.Expect(etcd.New(env.Client, namespace, main).Deploy(ctx)).To(Succeed())
	g.Expect(reconcileAsDruid(ctx, client.ObjectKey{Namespace: namespace, Name: "etcd-main"})).To(Succeed(), "Scale waits for druid to take the Deploy")
	g.Expect(etcd.New(env.Client, namespace, main).Scale(ctx, 3)).To(Succeed())
	mainSelector := &metav1.LabelSelector{MatchLabels: map[string]string{
		"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/part-of": "etcd-main"}}
	g.Expect(getEtcd(g, namespace, "etcd-main").Spec.SchedulingConstraints.TopologySpreadConstraints).To(Equal([]corev1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: mainSelector},
		{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule, MinDomains: ptr.To[int32](2), LabelSelector: mainSelector},
	}))
}

// As gardenlet's Scale: while druid has not reconciled the last change (the operation annotation is still
// set), a Scale would pile a second change onto one not yet acted on; it refuses, names the annotation and
// writes nothing.
func TestScaleRefusesWhileTheOperationAnnotationIsSet(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	c := etcd.New(env.Client, namespace, values(etcd.RoleEvents))
	g.Expect(c.Deploy(ctx)).To(Succeed())
	before := getEtcd(g, namespace, "etcd-events")

	err := c.Scale(ctx, 3)
	g.Expect(err).To(MatchError(ContainSubstring(`annotation "gardener.cloud/operation" is still set`)))
	g.Expect(getEtcd(g, namespace, "etcd-events").ResourceVersion).To(Equal(before.ResourceVersion))

	g.Expect(reconcileAsDruid(ctx, clientKey(before))).To(Succeed())
	g.Expect(c.Scale(ctx, 3)).To(Succeed())
	g.Expect(getEtcd(g, namespace, "etcd-events").Spec.Replicas).To(Equal(int32(3)))
}
