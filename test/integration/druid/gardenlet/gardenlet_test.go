package gardenlet

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/cmd/etcd-druid/app"
	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagevector"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
	"github.com/gardener-etcd/gardener-etcd/test/support/freeport"
	"github.com/gardener-etcd/gardener-etcd/test/support/gardenlet"
)

const (
	timeout = 60 * time.Second
	poll    = 200 * time.Millisecond
)

// gardenletConfig is Gardener's rendered OperatorConfiguration (see the file's header for its source).
var gardenletConfig = filepath.Join("..", "..", "..", "..", "cmd", "etcd-druid", "app", "testdata", "gardenlet-operatorconfiguration.yaml")

// druidIdentity creates druid's namespace and its service account bound to the copy of Gardener's
// ClusterRole and returns a kubeconfig for it (druid is system:serviceaccount:<ns>:etcd-druid, the user the
// configuration names as the reconciler).
func druidIdentity(t *testing.T, ctx context.Context) (string, *rest.Config) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: druidNamespace}})).To(Succeed())
	cfg, err := gardenlet.DruidIdentity(ctx, env.Client, env.Config, druidNamespace)
	g.Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(gardenlet.WriteKubeconfig(cfg, path)).To(Succeed())
	return path, cfg
}

// TestDruidUnderGardenletsDeployment: druid started with only gardenlet's configuration and image vector,
// under gardenlet's ClusterRole and behind gardenlet's webhook configuration, starts, reconciles an Etcd
// with the overwritten images, skips the NetworkPolicy it may not manage with a condition and a core
// event, lets a StatefulSet of another namespace scale and updates its own objects through the webhook.
func TestDruidUnderGardenletsDeployment(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	kubeconfig, druidConfig := druidIdentity(t, ctx)
	overwrite := filepath.Join(t.TempDir(), "images_overwrite.yaml")
	g.Expect(os.WriteFile(overwrite, []byte(`images:
- name: etcd-wrapper
  repository: registry.example/gardener-etcd/etcd-wrapper
  tag: v9.9.9
- name: etcd-backup-restore
  repository: registry.example/gardener-etcd/etcdbrctl
  tag: v9.9.8
`), 0o600)).To(Succeed())
	t.Setenv(imagevector.OverrideEnv, overwrite)

	probe := net.JoinHostPort("127.0.0.1", strconv.Itoa(freeport.Port(t)))
	wh := env.WebhookInstallOptions
	cmd := app.NewCommand()
	// Gardenlet's --config only; the rest puts the pod's surroundings in place outside a pod: the
	// kubeconfig instead of the in-cluster one, the namespace of the leader election Lease (a pod's own),
	// envtest's webhook address and certificate instead of port 10250 and the mounted secret, and no
	// metrics listener on the shared port 8080.
	cmd.SetArgs([]string{
		"--config=" + gardenletConfig,
		"--kubeconfig=" + kubeconfig,
		"--leader-election-namespace=" + druidNamespace,
		"--metrics-bind-address=0", "--health-probe-bind-address=" + probe,
		"--webhook-host=" + wh.LocalServingHost, "--webhook-port=" + strconv.Itoa(wh.LocalServingPort), "--webhook-cert-dir=" + wh.LocalServingCertDir,
		"--zap-log-level=error",
	})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(runCtx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("druid did not stop within 30s")
		}
	})

	t.Run("starts", func(t *testing.T) {
		NewWithT(t).Eventually(func(g Gomega) {
			select {
			case err := <-done:
				StopTrying("druid exited").Wrap(err).Now()
			default:
			}
			resp, err := http.Get("http://" + probe + "/readyz")
			g.Expect(err).NotTo(HaveOccurred())
			_ = resp.Body.Close()
			g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
		}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	})

	ns := env.CreateNamespace(t)
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: ns},
		Spec: druidv1alpha1.EtcdSpec{Labels: map[string]string{"role": "main"}, Replicas: 1}}
	g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())
	sts := &appsv1.StatefulSet{}

	t.Run("reconciles with the overwritten images, NetworkPolicy skipped with a condition", func(t *testing.T) {
		g := NewWithT(t)
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), etcd)).To(Succeed())
			g.Expect(etcd.Status.ObservedGeneration).To(Equal(ptr.To(etcd.Generation)), "%+v", etcd.Status.LastOperation)
			c := druidv1alpha1.FindCondition(etcd.Status.Conditions, etcdcontroller.ConditionTypeComponentPermissionsMissing)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(druidv1alpha1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring("create networkpolicies.networking.k8s.io"))
		}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-main"}, sts)).To(Succeed())
		images := map[string]string{}
		for _, c := range sts.Spec.Template.Spec.Containers {
			images[c.Name] = c.Image
		}
		g.Expect(images).To(Equal(map[string]string{
			"etcd": "registry.example/gardener-etcd/etcd-wrapper:v9.9.9", "backup-restore": "registry.example/gardener-etcd/etcdbrctl:v9.9.8"}))
		policies := &networkingv1.NetworkPolicyList{}
		g.Expect(env.Client.List(ctx, policies, client.InNamespace(ns))).To(Succeed())
		g.Expect(policies.Items).To(BeEmpty())
	})

	t.Run("events land as core events", func(t *testing.T) {
		NewWithT(t).Eventually(func(g Gomega) []string {
			list := &corev1.EventList{}
			g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			var reasons []string
			for _, e := range list.Items {
				if e.InvolvedObject.Name == etcd.Name && e.InvolvedObject.Kind == "Etcd" {
					reasons = append(reasons, e.Reason)
				}
			}
			return reasons
		}).WithTimeout(timeout).WithPolling(poll).Should(ContainElement(etcdcontroller.EventReasonComponentPermissionsMissing))
	})

	t.Run("a StatefulSet of another namespace scales through the webhook", func(t *testing.T) {
		g := NewWithT(t)
		other := env.CreateNamespace(t)
		labels := map[string]string{"app": "unrelated"}
		unrelated := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Namespace: other},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.org/c:v1"}}}}}}
		g.Expect(env.Client.Create(ctx, unrelated)).To(Succeed())
		scale := &autoscalingv1.Scale{}
		g.Expect(env.Client.SubResource("scale").Get(ctx, unrelated, scale)).To(Succeed())
		scale.Spec.Replicas = 3
		g.Expect(env.Client.SubResource("scale").Update(ctx, unrelated, client.WithSubResourceBody(scale))).To(Succeed())
	})

	t.Run("druid updates its own objects through the webhook, others may not", func(t *testing.T) {
		g := NewWithT(t)
		asDruid, err := client.New(druidConfig, client.Options{Scheme: envtest.Scheme})
		g.Expect(err).NotTo(HaveOccurred())
		mine := &appsv1.StatefulSet{}
		g.Expect(asDruid.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-main"}, mine)).To(Succeed())
		base := mine.DeepCopy()
		mine.Annotations = map[string]string{"example.org/touched-by": "druid"}
		g.Expect(asDruid.Patch(ctx, mine, client.MergeFrom(base))).To(Succeed())

		theirs := base.DeepCopy()
		theirs.Annotations = map[string]string{"example.org/touched-by": "someone-else"}
		err = env.Client.Patch(ctx, theirs, client.MergeFrom(base))
		g.Expect(err).To(MatchError(ContainSubstring(druidv1alpha1.DisableEtcdComponentProtectionAnnotation)))
	})
}
