package druid_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/cmd/gardener-etcd/app"
	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/druid"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/etcdvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhookcert"
)

const namespace = "garden"

// bootstrapped lists every object a bootstrap writes, for the idempotency check.
func bootstrapped() []client.Object {
	ns := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: namespace} }
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: ns(druid.Name)},
		&corev1.Service{ObjectMeta: ns(druid.Name)},
		&corev1.Secret{ObjectMeta: ns(druid.WebhookSecretName)},
		&appsv1.Deployment{ObjectMeta: ns(druid.Name)},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: etcdvalidation.ConfigurationName}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: protection.ConfigurationName}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "etcds.druid.gardener.cloud"}},
	}
}

func resourceVersions(g Gomega) map[string]string {
	versions := map[string]string{}
	for _, obj := range bootstrapped() {
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed(), "%T %s", obj, obj.GetName())
		versions[fmt.Sprintf("%T %s", obj, obj.GetName())] = obj.GetResourceVersion()
	}
	return versions
}

// markAvailable writes the Deployment status the Deployment controller would write once its pods are ready.
func markAvailable(g Gomega) {
	ctx := context.Background()
	deploy := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: druid.Name}, deploy)).To(Succeed())
	replicas := *deploy.Spec.Replicas
	deploy.Status = appsv1.DeploymentStatus{
		ObservedGeneration: deploy.Generation, Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
			LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
	}
	g.Expect(env.Client.Status().Update(ctx, deploy)).To(Succeed())
}

// lifecycleRan is set once TestBootstrapLifecycle ran in this test binary: it leaves the seed bootstrapped
// (druid's webhooks registered for a service nothing serves), which a second run cannot start from.
var lifecycleRan atomic.Bool

// TestBootstrapLifecycle runs the whole seed lifecycle in order, because Destroy removes the CRDs the
// envtest environment installed: an Etcd that exists before the bootstrap (its validation webhook would
// otherwise have to be served) → Deploy → idempotent Deploy → Wait → Destroy refused → Etcd gone → Destroy.
func TestBootstrapLifecycle(t *testing.T) {
	if lifecycleRan.Swap(true) {
		t.Skip("the lifecycle starts from a seed without druid and ends bootstrapped; it runs once per test binary (-count > 1)")
	}
	g := NewWithT(t)
	ctx := context.Background()
	etcdNamespace := env.CreateNamespace(t)
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: etcdNamespace}}
	etcd.Spec.Replicas = 1
	etcd.Spec.Labels = map[string]string{"app": "etcd"}
	etcd.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "etcd"}}
	g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())
	// Created before the webhooks exist: no druid serves them here.
	opsTask := &druidv1alpha1.EtcdOpsTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: etcdNamespace, Name: "snapshot"},
		Spec: druidv1alpha1.EtcdOpsTaskSpec{EtcdName: ptr.To("etcd-main"), Config: druidv1alpha1.EtcdOpsTaskConfig{
			OnDemandSnapshot: &druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeFull},
		}},
	}
	g.Expect(env.Client.Create(ctx, opsTask)).To(Succeed())

	component := druid.New(env.Client, namespace, druid.Values{
		Image: "registry.example:5000/etcd-druid:v1.2.3", EtcdWrapperImage: "example/etcd-wrapper:v1", BackupRestoreImage: "example/etcdbrctl:v1",
		WaitTimeout: 2 * time.Second, WaitInterval: 100 * time.Millisecond,
	})
	g.Expect(component.Deploy(ctx)).To(Succeed())

	// The Deployment runs the given images with auto-reconcile off and mounts the generated certificate.
	deploy := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: druid.Name}, deploy)).To(Succeed())
	c := deploy.Spec.Template.Spec.Containers[0]
	g.Expect(c.Image).To(Equal("registry.example:5000/etcd-druid:v1.2.3"))
	g.Expect(c.Args).To(ContainElements("--enable-etcd-spec-auto-reconcile=false", "--etcd-wrapper-image=example/etcd-wrapper:v1", "--backup-restore-image=example/etcdbrctl:v1"))
	g.Expect(deploy.Spec.Template.Spec.Volumes[0].Secret.SecretName).To(Equal(druid.WebhookSecretName))

	// The serving certificate covers the service and the webhook configurations trust its CA.
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: druid.WebhookSecretName}, secret)).To(Succeed())
	bundle := webhookcert.FromData(secret.Data)
	g.Expect(bundle.Valid([]string{"etcd-druid.garden.svc"}, time.Now(), 0)).To(BeTrue())
	for _, name := range []string{etcdvalidation.ConfigurationName, protection.ConfigurationName} {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, vwc)).To(Succeed())
		for _, w := range vwc.Webhooks {
			g.Expect(w.ClientConfig.CABundle).To(Equal(bundle.CACert), "%s/%s", name, w.Name)
			g.Expect(w.ClientConfig.Service.Name).To(Equal(druid.Name))
		}
	}

	// Idempotent: a second bootstrap writes nothing (same resource versions, same certificate).
	before := resourceVersions(g)
	g.Expect(component.Deploy(ctx)).To(Succeed())
	g.Expect(resourceVersions(g)).To(Equal(before))

	// Wait: not available without a running pod, with a message saying why; available once the status says so.
	err := component.Wait(ctx)
	g.Expect(err).To(MatchError(ContainSubstring("deployment etcd-druid: generation 1 not observed")))
	markAvailable(g)
	g.Expect(component.Wait(ctx)).To(Succeed())

	// Destroy is refused while the Etcd exists, naming it, and removes nothing.
	err = component.Destroy(ctx)
	var inUse *druid.InUseError
	g.Expect(errors.As(err, &inUse)).To(BeTrue(), "error %v", err)
	g.Expect(err.Error()).To(ContainSubstring("Etcd " + etcdNamespace + "/etcd-main"))
	g.Expect(err.Error()).To(ContainSubstring("EtcdOpsTask " + etcdNamespace + "/snapshot"))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(deploy), deploy)).To(Succeed())

	// The CLI refuses the same way.
	out, err := gardenerEtcd(t, "seed", "destroy", "--namespace", namespace)
	g.Expect(err).To(MatchError(ContainSubstring("etcd-main")))
	g.Expect(out).To(ContainSubstring("Delete every Etcd"))

	// Without the Etcd, an EtcdOpsTask still holds druid: a finished one lives until druid deletes it after
	// its TTL.
	g.Expect(env.Client.Delete(ctx, etcd)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), etcd)) }, 10*time.Second, 100*time.Millisecond).Should(BeTrue())
	err = component.Destroy(ctx)
	g.Expect(errors.As(err, &inUse)).To(BeTrue(), "error %v", err)
	g.Expect(inUse.Resources).To(Equal([]string{"EtcdOpsTask " + etcdNamespace + "/snapshot"}))

	// Without Etcds and tasks, Destroy removes druid, its secret and the CRDs.
	g.Expect(env.Client.Delete(ctx, opsTask)).To(Succeed())
	out, err = gardenerEtcd(t, "seed", "destroy", "--namespace", namespace)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("removed"))
	for _, obj := range bootstrapped() {
		g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)) },
			20*time.Second, 100*time.Millisecond).Should(BeTrue(), "%T %s still exists", obj, obj.GetName())
	}

	// The CLI bootstraps again from scratch (CRDs included) and prints its progress; --wait=false because
	// nothing here runs the Deployment controller.
	out, err = gardenerEtcd(t, "seed", "bootstrap", "--namespace", namespace, "--wait=false")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("Deploying the druid CRDs and etcd-druid into namespace garden"))
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Name: "etcds.druid.gardener.cloud"}, &apiextensionsv1.CustomResourceDefinition{})
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
}

// gardenerEtcd runs the CLI in-process with a kubeconfig for the test apiserver and returns its output.
func gardenerEtcd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: env.Config.CertData, ClientKeyData: env.Config.KeyData, Token: env.Config.BearerToken}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	cfg.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	cmd := app.NewRootCommand(&out, &errOut)
	cmd.SetArgs(append(args, "--kubeconfig", path))
	err := cmd.ExecuteContext(context.Background())
	t.Logf("gardener-etcd %v:\n%s%s", args, out.String(), errOut.String())
	return out.String(), err
}
