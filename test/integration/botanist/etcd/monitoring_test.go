package etcd_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monitoringv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-etcd/gardener-etcd/pkg/apis"
	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// monitoringClient reads the monitoring objects typed; the component itself writes them with env.Client,
// whose scheme does not know them.
func monitoringClient(t *testing.T) client.Client {
	t.Helper()
	scheme := apis.NewScheme()
	utilruntime.Must(monitoringv1.AddToScheme(scheme))
	utilruntime.Must(monitoringv1alpha1.AddToScheme(scheme))
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// On a cluster with the prometheus-operator API, Deploy writes Gardener's ServiceMonitor and PrometheusRule
// shoot-etcd-<role> (the backup alerts only for the backed-up main etcd) and puts back what someone changed;
// Destroy deletes both and the old ScrapeConfig shoot-etcd-druid, and a second Destroy finds nothing.
func TestDeployWritesTheMonitoringObjectsAndDestroyDeletesThem(t *testing.T) {
	env.InstallMonitoringCRDs(t)
	g := NewWithT(t)
	ctx := context.Background()
	mc := monitoringClient(t)
	s := newShoot(t)
	main := etcd.New(env.Client, s.namespace, s.mainValues())
	events := etcd.New(env.Client, s.namespace, values(etcd.RoleEvents))
	g.Expect(main.Deploy(ctx)).To(Succeed())
	g.Expect(events.Deploy(ctx)).To(Succeed())

	alerts := map[string][]string{}
	for _, role := range []string{etcd.RoleMain, etcd.RoleEvents} {
		key := client.ObjectKey{Namespace: s.namespace, Name: "shoot-etcd-" + role}
		sm := &monitoringv1.ServiceMonitor{}
		g.Expect(mc.Get(ctx, key, sm)).To(Succeed())
		g.Expect(sm.Labels).To(HaveKeyWithValue("prometheus", "shoot"))
		g.Expect(sm.Spec.Selector.MatchLabels).To(Equal(map[string]string{
			"app.kubernetes.io/name": "etcd-" + role + "-client", "app.kubernetes.io/part-of": "etcd-" + role,
		}))
		g.Expect(sm.Spec.Endpoints).To(HaveLen(2))
		g.Expect(sm.Spec.Endpoints[0].Port).To(Equal("client"))
		g.Expect(*sm.Spec.Endpoints[0].RelabelConfigs[1].Replacement).To(Equal("kube-etcd3-" + role))
		g.Expect(sm.Spec.Endpoints[1].Port).To(Equal("backuprestore"))
		g.Expect(sm.Spec.Endpoints[1].TLSConfig.Cert.Secret.Name).To(Equal(etcd.ClientSecretName))

		pr := &monitoringv1.PrometheusRule{}
		g.Expect(mc.Get(ctx, key, pr)).To(Succeed())
		g.Expect(pr.Labels).To(HaveKeyWithValue("prometheus", "shoot"))
		g.Expect(pr.Spec.Groups).To(HaveLen(1))
		g.Expect(pr.Spec.Groups[0].Name).To(Equal("kube-etcd3-" + role + ".rules"))
		for _, r := range pr.Spec.Groups[0].Rules {
			if r.Alert != "" {
				alerts[role] = append(alerts[role], r.Alert)
			}
		}
	}
	g.Expect(alerts[etcd.RoleMain]).To(ConsistOf("KubeEtcdMainDown", "KubeEtcd3MainNoLeader", "KubeEtcd3MainHighMemoryConsumption",
		"KubeEtcd3MainDbSizeLimitApproaching", "KubeEtcd3MainDbSizeLimitCrossed", "KubeEtcdMainDeltaBackupFailed",
		"KubeEtcdMainFullBackupFailed", "KubeEtcdMainRestorationFailed", "KubeEtcdMainBackupRestoreDown"))
	g.Expect(alerts[etcd.RoleEvents]).To(ConsistOf("KubeEtcdEventsDown", "KubeEtcd3EventsNoLeader", "KubeEtcd3EventsHighMemoryConsumption",
		"KubeEtcd3EventsDbSizeLimitApproaching", "KubeEtcd3EventsDbSizeLimitCrossed"))

	// A changed ServiceMonitor is put back by the next Deploy; labels others added stay.
	sm := &monitoringv1.ServiceMonitor{}
	g.Expect(mc.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: "shoot-etcd-events"}, sm)).To(Succeed())
	sm.Spec.Endpoints = sm.Spec.Endpoints[:1]
	metav1.SetMetaDataLabel(&sm.ObjectMeta, "team", "storage")
	g.Expect(mc.Update(ctx, sm)).To(Succeed())
	g.Expect(events.Deploy(ctx)).To(Succeed())
	g.Expect(mc.Get(ctx, client.ObjectKeyFromObject(sm), sm)).To(Succeed())
	g.Expect(sm.Spec.Endpoints).To(HaveLen(2))
	g.Expect(sm.Labels).To(HaveKeyWithValue("team", "storage"))

	// The ScrapeConfig older Gardener versions wrote goes with the etcds.
	sc := &monitoringv1alpha1.ScrapeConfig{ObjectMeta: metav1.ObjectMeta{Name: "shoot-etcd-druid", Namespace: s.namespace}}
	g.Expect(mc.Create(ctx, sc)).To(Succeed())
	for _, component := range []etcd.Interface{main, events} {
		g.Expect(component.Destroy(ctx)).To(Succeed())
		g.Expect(component.Destroy(ctx)).To(Succeed(), "a second Destroy finds nothing to delete")
	}
	for _, obj := range []client.Object{
		&monitoringv1.ServiceMonitor{ObjectMeta: metav1.ObjectMeta{Name: "shoot-etcd-main", Namespace: s.namespace}},
		&monitoringv1.ServiceMonitor{ObjectMeta: metav1.ObjectMeta{Name: "shoot-etcd-events", Namespace: s.namespace}},
		&monitoringv1.PrometheusRule{ObjectMeta: metav1.ObjectMeta{Name: "shoot-etcd-main", Namespace: s.namespace}},
		&monitoringv1.PrometheusRule{ObjectMeta: metav1.ObjectMeta{Name: "shoot-etcd-events", Namespace: s.namespace}},
		sc,
	} {
		err := mc.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%T %s: got %v", obj, obj.GetName(), err)
	}
}

// Without the prometheus-operator API (a cluster that is not a Gardener seed) Deploy writes the etcd, logs
// once that it writes no monitoring objects, and Destroy works. It runs on an apiserver of its own, since
// the suite's gets the monitoring CRDs.
func TestDeployWithoutThePrometheusOperatorAPIWritesTheEtcdAndLogsOnce(t *testing.T) {
	g := NewWithT(t)
	bare, err := envtest.Start(envtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := bare.Stop(); err != nil {
			t.Error(err)
		}
	})
	var (
		mu    sync.Mutex
		lines []string
	)
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, prefix+" "+args)
	}, funcr.Options{})
	ctx := logf.IntoContext(context.Background(), log)
	namespace := "shoot--bare--" + rand.String(8)
	g.Expect(bare.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())
	_, err = bare.Client.RESTMapper().RESTMapping(monitoringv1.SchemeGroupVersion.WithKind("ServiceMonitor").GroupKind())
	g.Expect(err).To(HaveOccurred(), "the bare apiserver must not serve ServiceMonitors")

	events := etcd.New(bare.Client, namespace, values(etcd.RoleEvents))
	g.Expect(events.Deploy(ctx)).To(Succeed())
	g.Expect(bare.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "etcd-events"}, &druidv1alpha1.Etcd{})).To(Succeed())
	mu.Lock()
	var skipped []string
	for _, line := range lines {
		if strings.Contains(line, "prometheus-operator API") {
			skipped = append(skipped, line)
		}
	}
	mu.Unlock()
	g.Expect(skipped).To(HaveLen(1), "one log line says the monitoring objects are skipped; all lines: %v", lines)
	g.Expect(events.Destroy(ctx)).To(Succeed())
}
