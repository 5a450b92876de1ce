package app

import (
	"testing"

	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestEtcdSuspendAndResumeWriteTheAnnotationWithTheReason(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	createEtcd(t, env, namespace, "etcd-main", 1, map[string]string{"keep": "me"}, druidv1alpha1.EtcdStatus{})
	common := []string{"-n", namespace, "--kubeconfig", kubeconfigFor(t, env, "")}
	annotations := func() map[string]string { return getEtcd(t, env, namespace, "etcd-main").Annotations }
	g.Expect(druidv1alpha1.SuspendEtcdSpecReconcileAnnotation).To(Equal("druid.gardener.cloud/suspend-etcd-spec-reconcile"))

	_, _, err := run(t, append([]string{"etcd", "suspend", "etcd-main"}, common...)...)
	g.Expect(err).To(MatchError(ContainSubstring(`required flag(s) "reason" not set`)))
	g.Expect(annotations()).NotTo(HaveKey(druidv1alpha1.SuspendEtcdSpecReconcileAnnotation))

	out, _, err := run(t, append([]string{"etcd", "suspend", "etcd-main", "--reason", "restoring member 0 by hand"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("Etcd etcd-main in namespace " + namespace + ": spec reconcile suspended (druid.gardener.cloud/suspend-etcd-spec-reconcile: restoring member 0 by hand)\n"))
	g.Expect(annotations()).To(HaveKeyWithValue(druidv1alpha1.SuspendEtcdSpecReconcileAnnotation, "restoring member 0 by hand"))

	out, _, err = run(t, append([]string{"etcd", "suspend", "etcd-main", "--reason", "restoring member 0 by hand"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("spec reconcile suspended already"))

	out, _, err = run(t, append([]string{"etcd", "suspend", "etcd-main", "--reason", "waiting for the new disk"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("the reason before was: restoring member 0 by hand"))
	g.Expect(annotations()).To(HaveKeyWithValue(druidv1alpha1.SuspendEtcdSpecReconcileAnnotation, "waiting for the new disk"))

	out, _, err = run(t, append([]string{"etcd", "resume", "etcd-main"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("Etcd etcd-main in namespace " + namespace + ": spec reconcile resumed (druid.gardener.cloud/suspend-etcd-spec-reconcile removed)\n" +
		"  the reason before was: waiting for the new disk\n"))
	g.Expect(annotations()).NotTo(HaveKey(druidv1alpha1.SuspendEtcdSpecReconcileAnnotation))
	g.Expect(annotations()).To(HaveKeyWithValue("keep", "me"), "only the one annotation is touched")

	out, _, err = run(t, append([]string{"etcd", "resume", "etcd-main"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("spec reconcile resumed already"))

	_, _, err = run(t, append([]string{"etcd", "resume", "etcd-nope"}, common...)...)
	g.Expect(err).To(MatchError("no Etcd etcd-nope in namespace " + namespace))
}

func TestEtcdProtectionOffAndOnWriteTheAnnotation(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	createEtcd(t, env, namespace, "etcd-events", 1, nil, druidv1alpha1.EtcdStatus{})
	common := []string{"-n", namespace, "--kubeconfig", kubeconfigFor(t, env, "")}
	g.Expect(druidv1alpha1.DisableEtcdComponentProtectionAnnotation).To(Equal("druid.gardener.cloud/disable-etcd-component-protection"))

	out, _, err := run(t, append([]string{"etcd", "protection", "off", "etcd-events", "--reason", "moving the PVC"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("component protection disabled (druid.gardener.cloud/disable-etcd-component-protection: moving the PVC)"))
	g.Expect(getEtcd(t, env, namespace, "etcd-events").Annotations).To(HaveKeyWithValue(druidv1alpha1.DisableEtcdComponentProtectionAnnotation, "moving the PVC"))

	out, _, err = run(t, append([]string{"etcd", "list", "-o", "json"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring(`"componentProtectionDisabled": "moving the PVC"`))

	out, _, err = run(t, append([]string{"etcd", "protection", "on", "etcd-events"}, common...)...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("component protection enabled (druid.gardener.cloud/disable-etcd-component-protection removed)"))
	g.Expect(getEtcd(t, env, namespace, "etcd-events").Annotations).NotTo(HaveKey(druidv1alpha1.DisableEtcdComponentProtectionAnnotation))

	_, _, err = run(t, append([]string{"etcd", "protection", "off", "etcd-events"}, common...)...)
	g.Expect(err).To(MatchError(ContainSubstring(`required flag(s) "reason" not set`)))
	_, _, err = run(t, append([]string{"etcd", "protection", "off", "etcd-events", "etcd-main", "--reason", "x"}, common...)...)
	g.Expect(err).To(MatchError(ContainSubstring("accepts 1 arg(s), received 2")))
}
