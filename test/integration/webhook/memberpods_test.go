package webhook

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
)

const statefulSetController = "system:serviceaccount:kube-system:statefulset-controller"

// memberPod is a pod with the Etcd's member labels, controlled by the StatefulSet named like the Etcd with
// the given UID (no owner when uid is empty).
func memberPod(etcd *druidv1alpha1.Etcd, name string, uid types.UID) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: etcd.Namespace, Labels: druidv1alpha1.ManagedLabels(etcd)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "etcd", Image: "etcd-wrapper"}}},
	}
	if uid != "" {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: druidv1alpha1.StatefulSetName(etcd), UID: uid,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	}
	return pod
}

func expectMemberLabelsRefused(g Gomega, err error, etcd *druidv1alpha1.Etcd) {
	g.ExpectWithOffset(1, apierrors.IsForbidden(err)).To(BeTrue(), "refused, got %v", err)
	g.ExpectWithOffset(1, err.Error()).To(And(ContainSubstring("metadata.labels"), ContainSubstring(druidv1alpha1.LabelPartOfKey+"="+etcd.Name),
		ContainSubstring("member of Etcd "+etcd.Namespace+"/"+etcd.Name), ContainSubstring(druidv1alpha1.DisableEtcdComponentProtectionAnnotation)))
}

// A stranger may not create a pod with an Etcd's member labels, nor with a copied owner reference (wrong
// UID), nor relabel a pod into a member; the StatefulSet controller creates the StatefulSet's pods.
func TestMemberPodsOnlyFromTheStatefulSet(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)
	etcd, sts := s.etcd, s.statefulSet
	stranger, kcm := clientAs(t, mallory), clientAs(t, statefulSetController)

	expectMemberLabelsRefused(g, stranger.Create(ctx, memberPod(etcd, "fake-member", "")), etcd)
	expectMemberLabelsRefused(g, stranger.Create(ctx, memberPod(etcd, druidv1alpha1.PodName(etcd, 1), sts.UID)), etcd)
	expectMemberLabelsRefused(g, kcm.Create(ctx, memberPod(etcd, druidv1alpha1.PodName(etcd, 1), "0badc0de-0000-0000-0000-000000000000")), etcd)

	g.Expect(kcm.Create(ctx, memberPod(etcd, druidv1alpha1.PodName(etcd, 0), sts.UID))).To(Succeed(), "the StatefulSet controller creates a member pod")
	g.Expect(clientAs(t, druidUser).Create(ctx, memberPod(etcd, "druids-own", ""))).To(Succeed(), "druid itself is exempt")

	// A pod that is no member (managed-by only) may be created, but not relabelled into one.
	half := memberPod(etcd, "half-member", "")
	delete(half.Labels, druidv1alpha1.LabelPartOfKey)
	g.Expect(stranger.Create(ctx, half)).To(Succeed())
	half.Labels[druidv1alpha1.LabelPartOfKey] = etcd.Name
	expectMemberLabelsRefused(g, stranger.Update(ctx, half), etcd)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(half), half)).To(Succeed())
	g.Expect(half.Labels).NotTo(HaveKey(druidv1alpha1.LabelPartOfKey))

	// Updates that keep the member labels pass (e.g. the StatefulSet controller's pod-name label).
	member := &corev1.Pod{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.PodName(etcd, 0)}, member)).To(Succeed())
	member.Labels["statefulset.kubernetes.io/pod-name"] = member.Name
	g.Expect(stranger.Update(ctx, member)).To(Succeed())

	// Pods of other workloads, without the member labels, are none of druid's business.
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: etcd.Namespace, Labels: map[string]string{druidv1alpha1.LabelPartOfKey: etcd.Name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	g.Expect(stranger.Create(ctx, plain)).To(Succeed())
}

// With the Etcd's component protection disabled, anybody may create member pods (as for its other
// components).
func TestMemberPodsAllowedWhileProtectionIsDisabled(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)
	patch := client.MergeFrom(s.etcd.DeepCopy())
	metav1.SetMetaDataAnnotation(&s.etcd.ObjectMeta, druidv1alpha1.DisableEtcdComponentProtectionAnnotation, "")
	g.Expect(env.Client.Patch(ctx, s.etcd, patch)).To(Succeed())
	g.Expect(clientAs(t, mallory).Create(ctx, memberPod(s.etcd, "recovery-helper", ""))).To(Succeed())
}

// Availability first: with druid's webhook server unreachable, kube-controller-manager still creates member
// pods (its webhook fails open), while everybody else's member pods are refused (fail closed). A
// configuration like druid's points at a closed port, limited to this test's namespace.
func TestMemberPodsWhileDruidIsDown(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)

	down := protection.WebhookConfiguration(admissionregistrationv1.ServiceReference{}, nil, podControllerUsers)
	down.Name = "druid-down-" + s.etcd.Namespace
	closedPort := "https://127.0.0.1:1" + protection.MemberPodsPath
	var webhooks []admissionregistrationv1.ValidatingWebhook
	for _, w := range down.Webhooks {
		if w.ClientConfig.Service == nil || w.ClientConfig.Service.Path == nil || *w.ClientConfig.Service.Path != protection.MemberPodsPath {
			continue
		}
		w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &closedPort}
		w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: s.etcd.Namespace}}
		webhooks = append(webhooks, w)
	}
	g.Expect(webhooks).To(HaveLen(4), "managed and legacy member labels, each for controllers and for everybody else")
	down.Webhooks = webhooks
	g.Expect(env.Client.Create(ctx, down)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), down) })

	// The apiserver picks the configuration up asynchronously: wait until a stranger's pod fails calling it.
	g.Eventually(func() error {
		return clientAs(t, mallory).Create(ctx, memberPod(s.etcd, "probe", ""))
	}).WithTimeout(30 * time.Second).Should(MatchError(ContainSubstring("failed calling webhook")))

	g.Expect(clientAs(t, statefulSetController).Create(ctx, memberPod(s.etcd, druidv1alpha1.PodName(s.etcd, 0), s.statefulSet.UID))).To(Succeed(),
		"the StatefulSet controller recreates a member pod with druid down")
	g.Expect(clientAs(t, seedControllerManager).Create(ctx, memberPod(s.etcd, druidv1alpha1.PodName(s.etcd, 1), s.statefulSet.UID))).To(Succeed(),
		"a configured controller user recreates a member pod with druid down")
	legacy := legacyMemberPod(s.etcd, "legacy-probe", "")
	g.Expect(clientAs(t, mallory).Create(ctx, legacy)).To(MatchError(ContainSubstring("failed calling webhook")),
		"a stranger's pod with the legacy member labels fails closed")
	g.Expect(clientAs(t, statefulSetController).Create(ctx, legacyMemberPod(s.etcd, druidv1alpha1.PodName(s.etcd, 2), s.statefulSet.UID))).To(Succeed(),
		"the StatefulSet controller recreates a legacy-labelled member pod with druid down")
}

// legacyMemberPod is memberPod with the legacy selector's labels (instance=<etcd>, name=etcd) instead of
// druid's.
func legacyMemberPod(etcd *druidv1alpha1.Etcd, name string, uid types.UID) *corev1.Pod {
	pod := memberPod(etcd, name, uid)
	pod.Labels = druidv1alpha1.LegacyMemberLabels(etcd)
	return pod
}

// A StatefulSet adopted from an older etcd-druid may select its members with the legacy labels, and druid's
// PDB, client Service and NetworkPolicy then select with them too: a stranger may neither create a pod with
// instance=<etcd>, name=etcd nor relabel a pod into one; the StatefulSet controller creates the
// StatefulSet's pods. The labels naming no Etcd are none of druid's business.
func TestLegacyMemberLabelsOnlyFromTheStatefulSet(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)
	etcd, sts := s.etcd, s.statefulSet
	stranger, kcm := clientAs(t, mallory), clientAs(t, statefulSetController)
	expectRefused := func(err error) {
		g.ExpectWithOffset(1, apierrors.IsForbidden(err)).To(BeTrue(), "refused, got %v", err)
		g.ExpectWithOffset(1, err.Error()).To(And(ContainSubstring("metadata.labels"), ContainSubstring("instance="+etcd.Name),
			ContainSubstring("member of Etcd "+etcd.Namespace+"/"+etcd.Name)))
	}

	expectRefused(stranger.Create(ctx, legacyMemberPod(etcd, "fake-member", "")))
	expectRefused(stranger.Create(ctx, legacyMemberPod(etcd, druidv1alpha1.PodName(etcd, 1), sts.UID)))
	expectRefused(kcm.Create(ctx, legacyMemberPod(etcd, druidv1alpha1.PodName(etcd, 1), "0badc0de-0000-0000-0000-000000000000")))
	g.Expect(kcm.Create(ctx, legacyMemberPod(etcd, druidv1alpha1.PodName(etcd, 0), sts.UID))).To(Succeed(), "the StatefulSet controller creates a member pod")
	g.Expect(clientAs(t, druidUser).Create(ctx, legacyMemberPod(etcd, "druids-own", ""))).To(Succeed(), "druid itself is exempt")

	// Relabelling into the legacy selector is refused.
	half := legacyMemberPod(etcd, "half-member", "")
	delete(half.Labels, druidv1alpha1.LabelLegacyInstanceKey)
	g.Expect(stranger.Create(ctx, half)).To(Succeed())
	half.Labels[druidv1alpha1.LabelLegacyInstanceKey] = etcd.Name
	expectRefused(stranger.Update(ctx, half))

	// Labels that name no Etcd are not member labels.
	other := legacyMemberPod(etcd, "other", "")
	other.Labels[druidv1alpha1.LabelLegacyInstanceKey] = "no-such-etcd"
	g.Expect(stranger.Create(ctx, other)).To(Succeed())
}

// A seed whose kube-controller-manager authenticates under another name than the defaults configures it
// (--pod-controller-users): its StatefulSet controller then creates member pods, while the configured
// name gains nothing for a pod that is not the StatefulSet's.
func TestConfiguredPodControllerUserCreatesMemberPods(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)
	seedKCM := clientAs(t, seedControllerManager)
	g.Expect(seedKCM.Create(ctx, memberPod(s.etcd, druidv1alpha1.PodName(s.etcd, 0), s.statefulSet.UID))).To(Succeed())
	expectMemberLabelsRefused(g, seedKCM.Create(ctx, memberPod(s.etcd, "not-the-statefulsets", "")), s.etcd)
}
