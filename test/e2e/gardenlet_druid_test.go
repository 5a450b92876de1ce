//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	"github.com/Masterminds/semver/v3"
	gardenletconfigv1alpha1 "github.com/gardener/gardener/pkg/apis/config/gardenlet/v1alpha1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	gardenerkubernetes "github.com/gardener/gardener/pkg/client/kubernetes"
	gardeneretcd "github.com/gardener/gardener/pkg/component/etcd/etcd"
	"github.com/gardener/gardener/pkg/component/gardener/resourcemanager"
	"github.com/gardener/gardener/pkg/component/observability/monitoring/prometheusoperator"
	"github.com/gardener/gardener/pkg/resourcemanager/webhook/projectedtokenmount"
	"github.com/gardener/gardener/pkg/utils/managedresources"
	secretsutils "github.com/gardener/gardener/pkg/utils/secrets"
	secretsmanager "github.com/gardener/gardener/pkg/utils/secrets/manager"
	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/druid"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// gardenerIdentity is the identity of gardenlet's secrets managers (hashed secret names carry it).
const gardenerIdentity = "gardenlet"

// gardenerClient is a client of the seed with Gardener's seed scheme: Gardener's components write through
// it exactly the objects gardenlet writes (upstream druid's API types, VPAs, monitoring objects,
// ManagedResources).
func gardenerClient() client.Client {
	c, err := client.New(seed.RESTConfig(), client.Options{Scheme: gardenerkubernetes.SeedScheme})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// seedVersion is the seed apiserver's Kubernetes version, which selects upstream druid's CRD flavour as it
// does in gardenlet.
func seedVersion() *semver.Version {
	dc, err := discovery.NewDiscoveryClientForConfig(seed.RESTConfig())
	Expect(err).NotTo(HaveOccurred())
	info, err := dc.ServerVersion()
	Expect(err).NotTo(HaveOccurred())
	v, err := semver.NewVersion(info.GitVersion)
	Expect(err).NotTo(HaveOccurred())
	return v
}

// gardenletDruid is druid as gardenlet deploys it into a seed: the objects of Gardener's bootstrapper
// (pkg/component/etcd/etcd/bootstrap.go), read out of the ManagedResource it writes and applied to the seed
// as gardener-resource-manager would apply them.
type gardenletDruid struct {
	c       client.Client
	objects []client.Object
}

// deployDruidAsGardenlet replaces the suite's druid (our chart) by druid deployed from gardenlet's objects,
// with upstream druid's CRDs installed by Gardener's CRD component, and waits until it is available.
func deployDruidAsGardenlet(ctx context.Context) *gardenletDruid {
	c := gardenerClient()
	ours := druid.New(base.Client, seedworkflow.GardenNamespace, druid.Values{WaitTimeout: waitTimeout, WaitInterval: pollInterval})
	Expect(ours.Destroy(ctx)).To(Succeed())
	waitCRDsGone(ctx, c, "etcds.druid.gardener.cloud", "etcdcopybackupstasks.druid.gardener.cloud", "etcdopstasks.druid.gardener.cloud")

	By("installing the CRDs a seed has: upstream druid's (Gardener's etcd CRD component), monitoring.coreos.com, ManagedResources")
	druidCRDs, err := gardeneretcd.NewCRD(c, seedVersion())
	Expect(err).NotTo(HaveOccurred())
	monitoringCRDs, err := prometheusoperator.NewCRDs(c)
	Expect(err).NotTo(HaveOccurred())
	for _, crds := range []interface {
		Deploy(context.Context) error
		Wait(context.Context) error
	}{druidCRDs, monitoringCRDs} {
		Expect(crds.Deploy(ctx)).To(Succeed())
		Expect(crds.Wait(ctx)).To(Succeed())
	}
	mrCRD := &apiextensionsv1.CustomResourceDefinition{}
	Expect(yaml.Unmarshal([]byte(resourcemanager.CRD), mrCRD)).To(Succeed())
	Expect(client.IgnoreAlreadyExists(c.Create(ctx, mrCRD))).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(mrCRD), mrCRD)).To(Succeed())
		g.Expect(crdEstablished(mrCRD)).To(BeTrue())
	}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())

	// Gardener's seed system component creates the priority class gardenlet runs druid with.
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: v1beta1constants.PriorityClassNameSeedSystem800}, Value: 999998800}
	Expect(client.IgnoreAlreadyExists(c.Create(ctx, pc))).To(Succeed())

	By("running Gardener's etcd-druid bootstrapper with gardenlet's seed secrets manager and image vector")
	sm, err := secretsmanager.New(ctx, logr.Discard(), clock.RealClock{}, c, gardenerIdentity, secretsmanager.WithNamespaces(seedworkflow.GardenNamespace))
	Expect(err).NotTo(HaveOccurred())
	// As gardenlet's seed reconciler generates the seed CA.
	_, err = sm.Generate(ctx, &secretsutils.CertificateSecretConfig{Name: v1beta1constants.SecretNameCASeed, CommonName: "kubernetes",
		CertType: secretsutils.CACert, Validity: new(30 * 24 * time.Hour)}, secretsmanager.Rotate(secretsmanager.KeepOld))
	Expect(err).NotTo(HaveOccurred())
	cfg := &gardenletconfigv1alpha1.GardenletConfiguration{ETCDConfig: &gardenletconfigv1alpha1.ETCDConfig{}}
	gardenletconfigv1alpha1.SetObjectDefaults_GardenletConfiguration(cfg)
	images := seed.Images()
	// Gardenlet's component image vector overwrite for etcd-druid: druid's own image vector entries, naming
	// our images in the seed's registry.
	overwrite := fmt.Sprintf("images:\n- name: etcd-wrapper\n  ref: %s\n- name: etcd-backup-restore\n  ref: %s\n", images["etcd-wrapper"], images["etcdbrctl"])
	bootstrapper := gardeneretcd.NewBootstrapper(c, seedworkflow.GardenNamespace, cfg.ETCDConfig, images["etcd-druid"], &overwrite, sm,
		v1beta1constants.SecretNameCASeed, v1beta1constants.PriorityClassNameSeedSystem800, false, false)
	Expect(bootstrapper.Deploy(ctx)).To(Succeed())

	By("applying the ManagedResource's objects as gardener-resource-manager does (no resource manager runs here)")
	objects, err := managedresources.GetObjects(ctx, c, seedworkflow.GardenNamespace, gardeneretcd.Druid)
	Expect(err).NotTo(HaveOccurred())
	for _, obj := range objects {
		if d, ok := obj.(*appsv1.Deployment); ok {
			mountProjectedToken(ctx, c, d)
		}
		Expect(c.Create(ctx, obj)).To(Succeed(), "creating %T %s", obj, obj.GetName())
	}
	Expect(seedworkflow.WaitDeploymentAvailable(ctx, base, seedworkflow.GardenNamespace, gardeneretcd.Druid)).To(Succeed())
	return &gardenletDruid{c: c, objects: objects}
}

// mountProjectedToken applies gardener-resource-manager's projected-token-mount webhook (Gardener's own
// handler) to the Deployment's pod template: gardenlet's ServiceAccount disables the token automount and
// relies on that webhook to mount a projected token, so without it druid would have no credentials.
func mountProjectedToken(ctx context.Context, c client.Client, d *appsv1.Deployment) {
	pod := &corev1.Pod{ObjectMeta: d.Spec.Template.ObjectMeta, Spec: d.Spec.Template.Spec}
	pod.Namespace = d.Namespace
	h := &projectedtokenmount.Handler{Logger: logr.Discard(), TargetReader: c, ExpirationSeconds: 43200}
	reqCtx := admission.NewContextWithRequest(ctx, admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Namespace: d.Namespace}})
	// The handler reads the ServiceAccount, which is among the objects created before the Deployment.
	Eventually(func() error { return h.Default(reqCtx, pod) }).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
	d.Spec.Template.Spec = pod.Spec
}

// restore removes gardenlet's druid, its secrets, the ManagedResource and upstream's CRDs, and bootstraps
// the suite's druid again, so that later scenarios find the seed as the suite set it up.
func (g *gardenletDruid) restore(ctx context.Context) {
	for i := len(g.objects) - 1; i >= 0; i-- {
		Expect(client.IgnoreNotFound(g.c.Delete(ctx, g.objects[i]))).To(Succeed(), "deleting %T %s", g.objects[i], g.objects[i].GetName())
	}
	Expect(managedresources.DeleteForSeed(ctx, g.c, seedworkflow.GardenNamespace, gardeneretcd.Druid)).To(Succeed())
	Expect(g.c.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(seedworkflow.GardenNamespace),
		client.MatchingLabels{secretsmanager.LabelKeyManagerIdentity: gardenerIdentity})).To(Succeed())
	druidCRDs, err := gardeneretcd.NewCRD(g.c, seedVersion())
	Expect(err).NotTo(HaveOccurred())
	Expect(druidCRDs.Destroy(ctx)).To(Succeed())
	waitCRDsGone(ctx, g.c, "etcds.druid.gardener.cloud", "etcdcopybackupstasks.druid.gardener.cloud", "etcdopstasks.druid.gardener.cloud")
	_, err = seedworkflow.BootstrapDruid(ctx, base)
	Expect(err).NotTo(HaveOccurred())
}

// waitCRDsGone waits until the named CRDs are deleted.
func waitCRDsGone(ctx context.Context, c client.Client, names ...string) {
	for _, name := range names {
		Eventually(func() bool {
			err := c.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{})
			return apierrors.IsNotFound(err)
		}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeTrue(), "CRD %s still exists", name)
	}
}

func crdEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}
