//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	chartloader "helm.sh/helm/v4/pkg/chart/v2/loader"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/charts"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/druid"
	"github.com/gardener-etcd/gardener-etcd/pkg/chartrender"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/etcdvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
)

// Names of upstream's images in the seed (localseed.UpstreamImages).
const (
	upstreamDruidImage         = "upstream-etcd-druid"
	upstreamBackupRestoreImage = "upstream-etcd-backup-restore"
)

const (
	// upstreamDruidNamespace is where upstream druid runs, apart from ours in the garden namespace.
	upstreamDruidNamespace = "upstream-etcd-druid"
	// upstreamFieldOwner applies upstream druid's objects.
	upstreamFieldOwner = "gardener-etcd-e2e-upstream-druid"
	// imageVectorPath is where upstream druid reads the image vector overwrite, gardenlet's mount path.
	imageVectorPath = "/imagevector_overwrite/images_overwrite.yaml"
)

// requireUpstreamImages returns the seed's images, skipping the container when upstream's are not there
// (`make tools-upstream` did not build their binaries; `make e2e` does).
func requireUpstreamImages() map[string]string {
	images := seed.Images()
	for name := range localseed.UpstreamImages {
		if images[name] == "" {
			Skip("image " + name + " missing: build upstream's binaries with `make tools-upstream` (make e2e does)")
		}
	}
	return images
}

// upstreamRepositoriesPattern matches the repository upstream's etcd-backup-restore image was pushed to in the
// seed's registry (a mirror of upstream's), for our druid's --upstream-image-repositories.
func upstreamRepositoriesPattern() string {
	repo, _, _ := strings.Cut(seed.Images()[upstreamBackupRestoreImage], "@")
	return "^" + strings.ReplaceAll(repo, ".", `\.`) + "$"
}

// stopOurDruid scales our druid to 0 and removes its webhook configurations, so that upstream druid is the
// only operator of the seed's Etcds; it registers the way back: our CRDs as they were (replacing upstream's)
// and our druid bootstrapped again.
func stopOurDruid(ctx context.Context) {
	DeferCleanup(func(ctx SpecContext) {
		restoreOurCRDs(ctx)
		_, err := seedworkflow.BootstrapDruid(ctx, base)
		Expect(err).NotTo(HaveOccurred())
	}, NodeTimeout(10*time.Minute))
	deploy := &appsv1.Deployment{}
	Expect(base.Client.Get(ctx, client.ObjectKey{Namespace: seedworkflow.GardenNamespace, Name: druid.Name}, deploy)).To(Succeed())
	patch := client.MergeFrom(deploy.DeepCopy())
	deploy.Spec.Replicas = ptr.To(int32(0))
	Expect(base.Client.Patch(ctx, deploy, patch)).To(Succeed())
	Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(base.Client.List(ctx, pods, client.InNamespace(seedworkflow.GardenNamespace),
			client.MatchingLabels{"app.kubernetes.io/name": druid.Name})).To(Succeed())
		g.Expect(pods.Items).To(BeEmpty(), "our druid's pods")
	}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
	for _, name := range []string{etcdvalidation.ConfigurationName, protection.ConfigurationName} {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
		Expect(client.IgnoreNotFound(base.Client.Delete(ctx, vwc))).To(Succeed())
	}
}

// restoreOurCRDs replaces the druid CRDs by ours (an update, not an apply: no field upstream's CRDs added may
// stay behind for the specs that follow).
func restoreOurCRDs(ctx context.Context) {
	crds, err := charts.CRDs(charts.EtcdDruid)
	Expect(err).NotTo(HaveOccurred())
	for _, ours := range crds {
		current := &apiextensionsv1.CustomResourceDefinition{}
		Expect(base.Client.Get(ctx, client.ObjectKeyFromObject(ours), current)).To(Succeed())
		current.Spec = ours.Spec
		Expect(base.Client.Update(ctx, current)).To(Succeed(), "restoring CRD %s", ours.Name)
	}
}

// upstreamDruidModuleDir is the directory of upstream etcd-druid's module at the version the tools module
// pins (hack/tools/upstream-etcd-druid), in the module cache `make tools-upstream` filled.
func upstreamDruidModuleDir() string {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/gardener/etcd-druid")
	cmd.Dir = filepath.Join(strings.TrimSpace(string(root)), "hack", "tools", "upstream-etcd-druid")
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred(), "finding upstream etcd-druid's module (make tools-upstream)")
	return strings.TrimSpace(string(out))
}

// deployUpstreamDruid installs upstream etcd-druid as its own chart (charts/ of its module) installs it:
// its CRDs, ClusterRole, ClusterRoleBinding, ServiceAccount, OperatorConfiguration ConfigMap, Service and
// Deployment, rendered with the chart's default values. Two things are added, as gardenlet adds them to the
// Deployment it renders: the image (upstream's, from the seed's registry) and an image vector overwrite
// (IMAGEVECTOR_OVERWRITE, a ConfigMap) that names our etcd-wrapper and etcdbrctl images for the keys upstream
// druid looks up (etcd-wrapper, etcd-backup-restore and their -next variants). Removal is registered.
func deployUpstreamDruid(ctx context.Context, druidImage string, images map[string]string) {
	moduleDir := upstreamDruidModuleDir()
	applyUpstreamCRDs(ctx, filepath.Join(moduleDir, "charts", "crds"))
	chart, err := chartloader.LoadDir(filepath.Join(moduleDir, "charts"))
	Expect(err).NotTo(HaveOccurred())
	objects, err := chartrender.Render(chart, chartrender.Release{Name: "etcd-druid", Namespace: upstreamDruidNamespace}, nil)
	Expect(err).NotTo(HaveOccurred())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: upstreamDruidNamespace}}
	Expect(client.IgnoreAlreadyExists(base.Client.Create(ctx, ns))).To(Succeed())
	vector := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "etcd-druid-imagevector-overwrite", Namespace: upstreamDruidNamespace},
		Data: map[string]string{filepath.Base(imageVectorPath): imageVectorOverwrite(images)}}
	Expect(base.Client.Create(ctx, vector)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		for _, obj := range objects {
			Expect(client.IgnoreNotFound(base.Client.Delete(ctx, obj))).To(Succeed())
		}
		Expect(client.IgnoreNotFound(base.Client.Delete(ctx, ns))).To(Succeed())
	}, NodeTimeout(2*time.Minute))
	for _, obj := range objects {
		if obj.GetKind() == "Deployment" {
			gardenletAdditions(obj, druidImage, vector.Name)
		}
		Expect(druid.Apply(ctx, base.Client, obj, upstreamFieldOwner)).To(Succeed(), "applying %s %s", obj.GetKind(), obj.GetName())
	}
	Eventually(func(g Gomega) {
		deploy := &appsv1.Deployment{}
		g.Expect(base.Client.Get(ctx, client.ObjectKey{Namespace: upstreamDruidNamespace, Name: "etcd-druid"}, deploy)).To(Succeed())
		g.Expect(deploy.Status.ObservedGeneration).To(Equal(deploy.Generation))
		g.Expect(deploy.Status.AvailableReplicas).To(Equal(ptr.Deref(deploy.Spec.Replicas, 1)), "upstream druid available")
	}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
}

// gardenletAdditions sets upstream druid's image and mounts the image vector overwrite into its container.
func gardenletAdditions(deploy *unstructured.Unstructured, image, vectorConfigMap string) {
	containers, _, err := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	Expect(err).NotTo(HaveOccurred())
	Expect(containers).To(HaveLen(1))
	c := containers[0].(map[string]any)
	c["image"] = image
	c["env"] = []any{map[string]any{"name": "IMAGEVECTOR_OVERWRITE", "value": imageVectorPath}}
	mounts, _, _ := unstructured.NestedSlice(c, "volumeMounts")
	c["volumeMounts"] = append(mounts, map[string]any{"name": "imagevector-overwrite", "mountPath": filepath.Dir(imageVectorPath), "readOnly": true})
	Expect(unstructured.SetNestedSlice(deploy.Object, containers, "spec", "template", "spec", "containers")).To(Succeed())
	volumes, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "volumes")
	volumes = append(volumes, map[string]any{"name": "imagevector-overwrite", "configMap": map[string]any{"name": vectorConfigMap}})
	Expect(unstructured.SetNestedSlice(deploy.Object, volumes, "spec", "template", "spec", "volumes")).To(Succeed())
}

// imageVectorOverwrite is an image vector in upstream druid's format naming our images by digest (a tag
// "sha256:…" is rendered as repository@sha256:…).
func imageVectorOverwrite(images map[string]string) string {
	var b strings.Builder
	b.WriteString("images:\n")
	for _, entry := range []struct{ name, image string }{
		{"etcd-wrapper", images["etcd-wrapper"]}, {"etcd-wrapper-next", images["etcd-wrapper"]},
		{"etcd-backup-restore", images["etcdbrctl"]}, {"etcd-backup-restore-next", images["etcdbrctl"]},
	} {
		repo, digest, ok := strings.Cut(entry.image, "@")
		Expect(ok).To(BeTrue(), "image %s is not named by digest", entry.image)
		b.WriteString("- name: " + entry.name + "\n  repository: " + repo + "\n  tag: \"" + digest + "\"\n")
	}
	return b.String()
}

// applyUpstreamCRDs applies the CRDs of upstream's chart (they replace ours until restoreOurCRDs).
func applyUpstreamCRDs(ctx context.Context, dir string) {
	entries, err := os.ReadDir(dir)
	Expect(err).NotTo(HaveOccurred())
	Expect(entries).NotTo(BeEmpty())
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		Expect(err).NotTo(HaveOccurred())
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(yaml.Unmarshal(data, crd)).To(Succeed(), e.Name())
		current := &apiextensionsv1.CustomResourceDefinition{}
		err = base.Client.Get(ctx, client.ObjectKeyFromObject(crd), current)
		if apierrors.IsNotFound(err) {
			Expect(base.Client.Create(ctx, crd)).To(Succeed())
			continue
		}
		Expect(err).NotTo(HaveOccurred())
		current.Spec = crd.Spec
		Expect(base.Client.Update(ctx, current)).To(Succeed(), "installing upstream's CRD %s", crd.Name)
	}
}
