package chartrender_test

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	resourcesv1alpha1 "github.com/gardener/gardener/pkg/apis/resources/v1alpha1"
	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/gardener-etcd/gardener-etcd/charts"
	druidapp "github.com/gardener-etcd/gardener-etcd/cmd/etcd-druid/app"
	extapp "github.com/gardener-etcd/gardener-etcd/cmd/gardener-extension-backup/app"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/backupvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/chartrender"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/networkpolicy"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/ensureetcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/etcdvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
)

const caPEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func chartDir(_ *testing.T, name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "charts", name)
}

// TestLint runs Helm's linter (what `helm lint` runs) on both charts with defaults and a variant.
func TestLint(t *testing.T) {
	for _, name := range []string{charts.EtcdDruid, charts.ExtensionBackup} {
		for variant, values := range map[string]map[string]any{
			"defaults":          nil,
			"webhooks disabled": {"webhooks": map[string]any{"enabled": false}},
			"monitoring":        {"monitoring": map[string]any{"enabled": true}},
		} {
			t.Run(name+"/"+variant, func(t *testing.T) {
				result := lint.RunAll(chartDir(t, name), values, "garden")
				for _, m := range result.Messages {
					if m.Severity >= support.ErrorSev {
						t.Errorf("lint error: %s", m)
					} else {
						t.Logf("lint: %s", m)
					}
				}
			})
		}
	}
}

func render(t *testing.T, name, release string, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	objs, err := chartrender.RenderEmbedded(name, chartrender.Release{Name: release, Namespace: "garden"}, values)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func find[T any](t *testing.T, objs []*unstructured.Unstructured, kind, name string) *T {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			typed := new(T)
			if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, typed, true); err != nil {
				t.Fatalf("%s %s: %v", kind, name, err)
			}
			return typed
		}
	}
	return nil
}

func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

// TestDruidDefaults: the objects of a seed bootstrap, druid hardened and auto-reconcile off, and webhook
// configurations identical to what the Go builders produce (the chart's copy must not drift).
func TestDruidDefaults(t *testing.T) {
	g := NewWithT(t)
	objs := render(t, charts.EtcdDruid, "etcd-druid", map[string]any{"webhooks": map[string]any{"caBundle": caPEM}})
	g.Expect(kinds(objs)).To(Equal([]string{
		"ClusterRole/etcd-druid", "ClusterRoleBinding/etcd-druid", "Deployment/etcd-druid",
		"PodDisruptionBudget/etcd-druid", "Service/etcd-druid", "ServiceAccount/etcd-druid",
		"ValidatingWebhookConfiguration/etcd-druid-components-protection", "ValidatingWebhookConfiguration/etcd-druid-validation",
	}))
	deploy := find[appsv1.Deployment](t, objs, "Deployment", "etcd-druid")
	pod := deploy.Spec.Template.Spec
	c := pod.Containers[0]
	// HA by default: two replicas, one leader, both serving the webhooks, on different nodes if possible,
	// and at most one of them voluntarily disrupted.
	g.Expect(*deploy.Spec.Replicas).To(Equal(int32(2)))
	g.Expect(pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector.MatchLabels).
		To(Equal(deploy.Spec.Selector.MatchLabels))
	pdb := find[policyv1.PodDisruptionBudget](t, objs, "PodDisruptionBudget", "etcd-druid")
	g.Expect(pdb.Spec.MaxUnavailable.IntValue()).To(Equal(1))
	g.Expect(c.Args).To(ContainElements(
		"--enable-etcd-spec-auto-reconcile=false",
		"--reconciler-service-account=system:serviceaccount:garden:etcd-druid",
		"--leader-election=true", "--leader-election-namespace=garden",
		"--health-probe-bind-address=:8081", "--webhook-port=9443",
	))
	cfg := parseDruidArgs(t, c.Args)
	g.Expect(cfg.Etcd.EnableEtcdSpecAutoReconcile).To(BeFalse(), "Gardener triggers reconciles with the operation annotation")
	g.Expect(cfg.Webhooks.Enabled).To(BeTrue())
	g.Expect(cfg.LeaderElection).To(BeTrue(), "the replicas elect one leader")
	g.Expect(cfg.Etcd.LocalBackup.AllowedHostPaths).To(BeNil(), "druid's default directory")
	g.Expect(cfg.Etcd.Images.Compatibility).To(Equal(imagecaps.Config{Mode: imagecaps.ModeAuto, UpstreamRepositories: imagecaps.DefaultUpstreamRepositories}))
	g.Expect(cfg.Webhooks.ReconcilerServiceAccount).To(Equal("system:serviceaccount:garden:etcd-druid"))
	g.Expect(cfg.Webhooks.PodControllerUsers).To(Equal(protection.DefaultPodControllerUsers))
	g.Expect(cfg.Webhooks.GarbageCollectorUsers).To(Equal(protection.DefaultGarbageCollectorUsers))
	g.Expect(*pod.SecurityContext.RunAsUser).To(Equal(int64(65532)))
	g.Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
	g.Expect(*c.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())
	g.Expect(c.LivenessProbe.HTTPGet.Port.StrVal).To(Equal("health"))
	g.Expect(c.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"))
	g.Expect(c.Resources.Requests).NotTo(BeEmpty())
	g.Expect(pod.Volumes[0].Secret.SecretName).To(Equal("etcd-druid-webhook-server"))

	svc := admissionregistrationv1.ServiceReference{Name: "etcd-druid", Namespace: "garden"}
	for _, want := range []*admissionregistrationv1.ValidatingWebhookConfiguration{
		etcdvalidation.WebhookConfiguration(svc, []byte(caPEM)),
		protection.WebhookConfiguration(svc, []byte(caPEM), protection.DefaultPodControllerUsers),
	} {
		got := find[admissionregistrationv1.ValidatingWebhookConfiguration](t, objs, "ValidatingWebhookConfiguration", want.Name)
		g.Expect(got).NotTo(BeNil())
		normalizeValidating(got)
		normalizeValidating(want)
		g.Expect(got.Webhooks).To(Equal(want.Webhooks), want.Name)
	}
}

// normalizeValidating drops what only one side sets: the port (the chart names 443, the builder leaves the
// apiserver's default of 443).
func normalizeValidating(cfg *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range cfg.Webhooks {
		if s := cfg.Webhooks[i].ClientConfig.Service; s != nil && s.Port != nil && *s.Port == 443 {
			s.Port = nil
		}
	}
}

// TestDruidVariant: webhooks off removes their configuration, port and certificate volume; the feature flags
// and replicas follow the values.
func TestDruidVariant(t *testing.T) {
	g := NewWithT(t)
	objs := render(t, charts.EtcdDruid, "druid", map[string]any{
		"replicas":            2,
		"webhooks":            map[string]any{"enabled": false},
		"controllers":         map[string]any{"etcd": map[string]any{"enableEtcdSpecAutoReconcile": true, "workers": 7}},
		"podDisruptionBudget": map[string]any{"enabled": false},
		"image":               map[string]any{"tag": "v9.9.9"},
		"localBackup":         map[string]any{"allowedHostPaths": []any{"/srv/a", "/srv/b"}},
		"networkPolicy":       map[string]any{"backupPortClientNamespaces": []any{"monitoring", "garden"}},
		"images":              map[string]any{"compatibility": "upstream", "upstreamRepositories": `^mirror\.example/gardener/`},
	})
	g.Expect(kinds(objs)).To(Equal([]string{"ClusterRole/druid", "ClusterRoleBinding/druid", "Deployment/druid", "Service/druid", "ServiceAccount/druid"}))
	deploy := find[appsv1.Deployment](t, objs, "Deployment", "druid")
	c := deploy.Spec.Template.Spec.Containers[0]
	g.Expect(*deploy.Spec.Replicas).To(Equal(int32(2)))
	g.Expect(c.Image).To(HaveSuffix(":v9.9.9"))
	g.Expect(c.Args).To(ContainElements("--enable-etcd-spec-auto-reconcile=true", "--enable-webhooks=false", "--etcd-workers=7"))
	g.Expect(strings.Join(c.Args, " ")).NotTo(ContainSubstring("--webhook-cert-dir"))
	g.Expect(deploy.Spec.Template.Spec.Volumes).To(BeEmpty())
	// Whatever the release is called, druid's pods carry the labels the Etcds' NetworkPolicies admit on the
	// backup port (full snapshot requests beyond triggerFullSnapshotThreshold).
	for k, v := range networkpolicy.DruidPodLabels {
		g.Expect(deploy.Spec.Template.Labels).To(HaveKeyWithValue(k, v))
	}
	cfg := parseDruidArgs(t, c.Args)
	g.Expect(cfg.Etcd.EnableEtcdSpecAutoReconcile).To(BeTrue())
	g.Expect(cfg.Webhooks.Enabled).To(BeFalse())
	g.Expect(cfg.Etcd.LocalBackup.AllowedHostPaths).To(Equal([]string{"/srv/a", "/srv/b"}))
	g.Expect(cfg.Etcd.BackupPortAccess).To(Equal(config.BackupPortAccess{DruidNamespace: "garden", ClientNamespaces: []string{"monitoring", "garden"}}))
	g.Expect(cfg.Etcd.Images.Compatibility).To(Equal(imagecaps.Config{Mode: imagecaps.ModeUpstream, UpstreamRepositories: `^mirror\.example/gardener/`}))
}

// Component protection switched off in the values drops its webhook configuration and tells druid so, while
// the Etcd validation webhook stays registered and served.
func TestDruidWithoutComponentProtectionKeepsValidation(t *testing.T) {
	g := NewWithT(t)
	objs := render(t, charts.EtcdDruid, "druid", map[string]any{"webhooks": map[string]any{"componentProtection": false, "caBundle": caPEM}})
	g.Expect(kinds(objs)).To(ContainElement("ValidatingWebhookConfiguration/etcd-druid-validation"))
	g.Expect(kinds(objs)).NotTo(ContainElement("ValidatingWebhookConfiguration/etcd-druid-components-protection"))
	cfg := parseDruidArgs(t, find[appsv1.Deployment](t, objs, "Deployment", "druid").Spec.Template.Spec.Containers[0].Args)
	g.Expect(cfg.Webhooks.Enabled).To(BeTrue())
	g.Expect(cfg.Webhooks.ComponentProtection).To(BeFalse())
}

// The former spellings of the image compatibility values, compatibility "deployed" and
// deployedRepositories, render as their new ones; upstreamRepositories wins when both are set.
func TestDruidImageCompatibilityFormerValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		images map[string]any
		want   string
	}{
		{"former spellings", map[string]any{"compatibility": "deployed", "deployedRepositories": `^old\.example/`}, `^old\.example/`},
		{"both repository values", map[string]any{"compatibility": "upstream", "deployedRepositories": `^old\.example/`, "upstreamRepositories": `^new\.example/`}, `^new\.example/`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			objs := render(t, charts.EtcdDruid, "druid", map[string]any{"images": tc.images})
			c := find[appsv1.Deployment](t, objs, "Deployment", "druid").Spec.Template.Spec.Containers[0]
			g.Expect(c.Args).To(ContainElements("--image-compatibility=upstream", "--upstream-image-repositories="+tc.want))
			g.Expect(strings.Join(c.Args, " ")).NotTo(ContainSubstring("deployed"), "the chart renders the new spellings only")
			cfg := parseDruidArgs(t, c.Args)
			g.Expect(cfg.Etcd.Images.Compatibility).To(Equal(imagecaps.Config{Mode: imagecaps.ModeUpstream, UpstreamRepositories: tc.want}))
		})
	}
}

// TestDruidMonitoring: monitoring on adds the two ServiceMonitors and the PrometheusRule, whose spec is
// files/prometheus-rules.yaml as it is (the file test/prometheusrules checks and tests with promtool).
func TestDruidMonitoring(t *testing.T) {
	g := NewWithT(t)
	objs := render(t, charts.EtcdDruid, "druid", map[string]any{"monitoring": map[string]any{
		"enabled": true,
		"labels":  map[string]any{"prometheus": "seed"},
		"etcd": map[string]any{"namespaces": []any{"shoot--a"}, "client": map[string]any{
			"scheme": "https", "tlsConfig": map[string]any{"insecureSkipVerify": true}}},
	}})
	g.Expect(kinds(objs)).To(ContainElements("PrometheusRule/druid", "ServiceMonitor/druid", "ServiceMonitor/druid-etcd"))

	raw, err := charts.FS.ReadFile(charts.EtcdDruid + "/files/prometheus-rules.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	var want map[string]any
	g.Expect(yaml.Unmarshal(raw, &want)).To(Succeed())
	g.Expect(want["groups"]).NotTo(BeEmpty())
	for _, o := range objs {
		switch o.GetKind() + "/" + o.GetName() {
		case "PrometheusRule/druid":
			g.Expect(o.GetAPIVersion()).To(Equal("monitoring.coreos.com/v1"))
			g.Expect(o.GetLabels()).To(HaveKeyWithValue("prometheus", "seed"))
			g.Expect(o.Object["spec"]).To(Equal(want))
		case "ServiceMonitor/druid":
			endpoints, _, _ := unstructured.NestedSlice(o.Object, "spec", "endpoints")
			g.Expect(endpoints).To(ConsistOf(HaveKeyWithValue("honorLabels", true)))
			g.Expect(o.GetLabels()).To(HaveKeyWithValue("prometheus", "seed"))
		case "ServiceMonitor/druid-etcd":
			names, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "namespaceSelector", "matchNames")
			g.Expect(names).To(Equal([]string{"shoot--a"}))
			sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "matchLabels")
			g.Expect(sel).To(Equal(map[string]string{"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/component": "etcd-client-service"}))
			endpoints, _, _ := unstructured.NestedSlice(o.Object, "spec", "endpoints")
			g.Expect(endpoints).To(ConsistOf(
				And(HaveKeyWithValue("port", "backuprestore"), HaveKeyWithValue("scheme", "http")),
				And(HaveKeyWithValue("port", "client"), HaveKeyWithValue("scheme", "https"), HaveKey("tlsConfig"))))
		}
	}

	objs = render(t, charts.EtcdDruid, "druid", map[string]any{"monitoring": map[string]any{
		"enabled": true, "rules": map[string]any{"enabled": false}, "etcd": map[string]any{"enabled": false}}})
	g.Expect(kinds(objs)).To(ContainElement("ServiceMonitor/druid"))
	g.Expect(kinds(objs)).NotTo(ContainElements("PrometheusRule/druid", "ServiceMonitor/druid-etcd"))
}

// parseDruidArgs parses the chart's args with etcd-druid's own flag set and validates the resulting
// configuration, so that the chart and the binary cannot drift apart.
func parseDruidArgs(t *testing.T, args []string) druidapp.Config {
	t.Helper()
	cmd := druidapp.NewCommand()
	if err := cmd.Flags().Parse(args); err != nil {
		t.Fatalf("etcd-druid rejects the chart's args %v: %v", args, err)
	}
	cfg, err := druidapp.ResolveConfig(cmd.Flags(), "", "")
	if err != nil {
		t.Fatalf("resolving etcd-druid's configuration from the chart's args: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the chart's args do not validate: %v", err)
	}
	return cfg
}

// TestExtensionDefaults: the mutating webhook equals the Go builder and the rendered args are accepted by
// the binary's own flag set and validation, so chart and binary cannot drift apart.
func TestExtensionDefaults(t *testing.T) {
	g := NewWithT(t)
	objs := render(t, charts.ExtensionBackup, "gardener-extension-backup", map[string]any{
		"webhooks":   map[string]any{"caBundle": caPEM},
		"ensureETCD": map[string]any{"main": map[string]any{"storageClass": "fast", "storageCapacity": "25Gi"}},
	})
	g.Expect(kinds(objs)).To(Equal([]string{
		"ClusterRole/gardener-extension-backup", "ClusterRoleBinding/gardener-extension-backup",
		"Deployment/gardener-extension-backup", "MutatingWebhookConfiguration/gardener-extension-backup-ensure-etcd",
		"PodDisruptionBudget/gardener-extension-backup", "Role/gardener-extension-backup-leader-election",
		"RoleBinding/gardener-extension-backup-leader-election", "Service/gardener-extension-backup",
		"ServiceAccount/gardener-extension-backup", "ValidatingWebhookConfiguration/gardener-extension-backup-validation",
	}))
	svc := admissionregistrationv1.ServiceReference{Name: "gardener-extension-backup", Namespace: "garden"}
	got := find[admissionregistrationv1.MutatingWebhookConfiguration](t, objs, "MutatingWebhookConfiguration", ensureetcd.ConfigurationName)
	want := ensureetcd.WebhookConfiguration(svc, []byte(caPEM))
	got.Webhooks[0].ClientConfig.Service.Port = nil
	g.Expect(got.Webhooks).To(Equal(want.Webhooks))
	deploy := find[appsv1.Deployment](t, objs, "Deployment", "gardener-extension-backup")
	opts := parseExtensionArgs(t, deploy.Spec.Template.Spec.Containers[0].Args)
	g.Expect(opts.ProviderTypes).To(Equal([]string{"local", "s3"}))
	g.Expect(opts.GeneratedSecretNamespaces).To(BeEmpty(), "generated bucket secrets only in garden")
	gotValidation := find[admissionregistrationv1.ValidatingWebhookConfiguration](t, objs, "ValidatingWebhookConfiguration", backupvalidation.ConfigurationName)
	wantValidation := backupvalidation.WebhookConfiguration(svc, []byte(caPEM), opts.ProviderTypes)
	normalizeValidating(gotValidation)
	g.Expect(gotValidation.Webhooks).To(Equal(wantValidation.Webhooks))

	// Both webhooks fail closed: two replicas, one leader, on different nodes and zones if possible, and at
	// most one of them voluntarily disrupted.
	pod := deploy.Spec.Template.Spec
	g.Expect(*deploy.Spec.Replicas).To(Equal(int32(2)))
	g.Expect(pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector.MatchLabels).
		To(Equal(deploy.Spec.Selector.MatchLabels))
	g.Expect(pod.TopologySpreadConstraints[0].TopologyKey).To(Equal("topology.kubernetes.io/zone"))
	g.Expect(pod.TopologySpreadConstraints[0].LabelSelector.MatchLabels).To(Equal(deploy.Spec.Selector.MatchLabels))
	pdb := find[policyv1.PodDisruptionBudget](t, objs, "PodDisruptionBudget", "gardener-extension-backup")
	g.Expect(pdb.Spec.MaxUnavailable.IntValue()).To(Equal(1))
	c := deploy.Spec.Template.Spec.Containers[0]
	g.Expect(opts.LeaderElection).To(BeTrue(), "the replicas elect one leader")
	g.Expect(*deploy.Spec.Template.Spec.SecurityContext.RunAsUser).To(Equal(int64(65532)))
	g.Expect(*c.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())
	g.Expect(opts.LocalRoot).To(Equal("/var/lib/gardener-etcd/backups"))
	g.Expect(opts.WebhookCertDir).To(Equal(c.VolumeMounts[0].MountPath))
	cfg, err := opts.EnsureETCDConfig()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Main.StorageClassName).To(Equal("fast"))
	g.Expect(cfg.Main.StorageCapacity.String()).To(Equal("25Gi"))
	g.Expect(cfg.Events.StorageClassName).To(BeEmpty())
}

// TestExtensionVariant: s3 only needs no host directory; webhooks off drop their configuration.
func TestExtensionVariant(t *testing.T) {
	g := NewWithT(t)
	objs := render(t, charts.ExtensionBackup, "backup", map[string]any{
		"providerTypes":             []any{"s3"},
		"webhooks":                  map[string]any{"enabled": false},
		"replicas":                  1,
		"leaderElection":            map[string]any{"enabled": false},
		"generatedSecretNamespaces": []any{"kube-system", "backups"},
	})
	g.Expect(kinds(objs)).NotTo(ContainElement(HavePrefix("MutatingWebhookConfiguration/")))
	g.Expect(kinds(objs)).NotTo(ContainElement(HavePrefix("ValidatingWebhookConfiguration/")))
	g.Expect(kinds(objs)).NotTo(ContainElement(HavePrefix("Role/")))
	deploy := find[appsv1.Deployment](t, objs, "Deployment", "backup")
	c := deploy.Spec.Template.Spec.Containers[0]
	opts := parseExtensionArgs(t, c.Args)
	g.Expect(opts.ProviderTypes).To(Equal([]string{"s3"}))
	g.Expect(opts.GeneratedSecretNamespaces).To(Equal([]string{"kube-system", "backups"}))
	g.Expect(opts.LocalRoot).To(BeEmpty())
	g.Expect(opts.EnableWebhooks).To(BeFalse())
	g.Expect(deploy.Spec.Template.Spec.Volumes).To(BeEmpty())
}

// TestExtensionValidationFollowsProviderTypes: the validating webhook routes only the provider types the
// binary is told to handle, so BackupEntries and BackupBuckets of other backup extensions on the seed never
// wait for this one.
func TestExtensionValidationFollowsProviderTypes(t *testing.T) {
	g := NewWithT(t)
	objs := render(t, charts.ExtensionBackup, "backup", map[string]any{"providerTypes": []any{"s3"}})
	deploy := find[appsv1.Deployment](t, objs, "Deployment", "backup")
	opts := parseExtensionArgs(t, deploy.Spec.Template.Spec.Containers[0].Args)
	g.Expect(opts.ProviderTypes).To(Equal([]string{"s3"}))
	got := find[admissionregistrationv1.ValidatingWebhookConfiguration](t, objs, "ValidatingWebhookConfiguration", backupvalidation.ConfigurationName)
	normalizeValidating(got)
	want := backupvalidation.WebhookConfiguration(admissionregistrationv1.ServiceReference{Name: "backup", Namespace: "garden"}, nil, opts.ProviderTypes)
	g.Expect(got.Webhooks).To(Equal(want.Webhooks))
	g.Expect(got.Webhooks[0].MatchConditions[0].Expression).To(ContainSubstring(`in ["s3"]`))
}

func parseExtensionArgs(t *testing.T, args []string) *extapp.Options {
	t.Helper()
	opts := extapp.NewOptions()
	fs := pflag.NewFlagSet("gardener-extension-backup", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the binary rejects the chart's args %v: %v", args, err)
	}
	if err := opts.Validate(); err != nil {
		t.Fatalf("the chart's args do not validate: %v", err)
	}
	return opts
}

// TestExtensionRefusesReplicasWithoutLeaderElection: several replicas without a leader would all reconcile the
// same BackupBuckets and BackupEntries; the chart refuses to render that.
func TestExtensionRefusesReplicasWithoutLeaderElection(t *testing.T) {
	_, err := chartrender.RenderEmbedded(charts.ExtensionBackup, chartrender.Release{Name: "backup", Namespace: "garden"}, map[string]any{
		"replicas": 2, "leaderElection": map[string]any{"enabled": false},
	})
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("replicas > 1 needs leaderElection.enabled")))
}

// networkPolicy.backupPortClientNamespaces: unset leaves druid's default (the release namespace), an empty
// list names no further namespace — two settings the chart must tell apart.
func TestDruidBackupPortClientNamespacesNoneDiffersFromDefault(t *testing.T) {
	g := NewWithT(t)
	argsOf := func(values map[string]any) druidapp.Config {
		objs := render(t, charts.EtcdDruid, "druid", values)
		return parseDruidArgs(t, find[appsv1.Deployment](t, objs, "Deployment", "druid").Spec.Template.Spec.Containers[0].Args)
	}
	g.Expect(argsOf(map[string]any{}).Etcd.BackupPortAccess.Namespaces()).To(Equal([]string{"garden"}), "default: the release namespace")
	none := argsOf(map[string]any{"networkPolicy": map[string]any{"backupPortClientNamespaces": []any{}}}).Etcd.BackupPortAccess
	g.Expect(none.ClientNamespaces).NotTo(BeNil())
	g.Expect(none.Namespaces()).To(BeEmpty(), "[]: no further namespace")
}

// webhooks.podControllerUsers reaches druid (--pod-controller-users) and the protection configuration's
// routing alike, as the Go builder writes it for the same list; webhooks.garbageCollectorUsers reaches
// druid (--garbage-collector-users).
func TestDruidPodControllerUsers(t *testing.T) {
	g := NewWithT(t)
	users := []string{"seed:kube-controller-manager", "system:serviceaccount:kube-system:statefulset-controller"}
	objs := render(t, charts.EtcdDruid, "druid", map[string]any{"webhooks": map[string]any{"caBundle": caPEM,
		"podControllerUsers": []any{users[0], users[1]}, "garbageCollectorUsers": []any{users[0]}}})
	cfg := parseDruidArgs(t, find[appsv1.Deployment](t, objs, "Deployment", "druid").Spec.Template.Spec.Containers[0].Args)
	g.Expect(cfg.Webhooks.PodControllerUsers).To(Equal(users))
	g.Expect(cfg.Webhooks.GarbageCollectorUsers).To(Equal(users[:1]))
	want := protection.WebhookConfiguration(admissionregistrationv1.ServiceReference{Name: "druid", Namespace: "garden"}, []byte(caPEM), users)
	got := find[admissionregistrationv1.ValidatingWebhookConfiguration](t, objs, "ValidatingWebhookConfiguration", want.Name)
	normalizeValidating(got)
	normalizeValidating(want)
	g.Expect(got.Webhooks).To(Equal(want.Webhooks))
}

// gardenerPodLabels are the labels gardenlet's druid Deployment gives its pods
// (Gardener's pkg/component/etcd/etcd/bootstrap.go): egress to DNS, to the seed's apiserver, and to the
// backup-restore port of every shoot's etcd-main (snapshot requests).
var gardenerPodLabels = map[string]string{
	"networking.gardener.cloud/to-dns":                                            "allowed",
	"networking.gardener.cloud/to-runtime-apiserver":                              "allowed",
	"networking.resources.gardener.cloud/to-all-shoots-etcd-main-client-tcp-8080": "allowed",
}

// TestDruidGardenerNetworkPolicyLabels: by default druid's pods carry the labels and its Service the
// annotations by which a Gardener seed's network policies open druid's traffic: egress by the pod labels,
// ingress to the webhook port from the apiserver (from-world-to-ports, the pod port behind Service port 443)
// and to the metrics port from the seed's Prometheus (scrape targets), in Gardener's JSON format.
func TestDruidGardenerNetworkPolicyLabels(t *testing.T) {
	g := NewWithT(t)
	objs := render(t, charts.EtcdDruid, "etcd-druid", nil)
	deploy := find[appsv1.Deployment](t, objs, "Deployment", "etcd-druid")
	for k, v := range gardenerPodLabels {
		g.Expect(deploy.Spec.Template.Labels).To(HaveKeyWithValue(k, v))
		g.Expect(deploy.Spec.Selector.MatchLabels).NotTo(HaveKey(k), "the selector is immutable and stays the chart's")
	}
	// The keys are Gardener's own.
	g.Expect(deploy.Spec.Template.Labels).To(HaveKeyWithValue(v1beta1constants.LabelNetworkPolicyToDNS, v1beta1constants.LabelNetworkPolicyAllowed))
	g.Expect(deploy.Spec.Template.Labels).To(HaveKeyWithValue(v1beta1constants.LabelNetworkPolicyToRuntimeAPIServer, v1beta1constants.LabelNetworkPolicyAllowed))
	g.Expect(deploy.Spec.Template.Labels).To(HaveKeyWithValue(networkpolicy.AllShootsAccessLabel("etcd-main-client", 8080), networkpolicy.LabelValueAllowed))

	svc := find[corev1.Service](t, objs, "Service", "etcd-druid")
	g.Expect(svc.Annotations).To(Equal(map[string]string{
		"networking.resources.gardener.cloud/from-world-to-ports":                        `[{"protocol":"TCP","port":9443}]`,
		"networking.resources.gardener.cloud/from-all-seed-scrape-targets-allowed-ports": `[{"protocol":"TCP","port":8080}]`,
	}))
	g.Expect(svc.Annotations).To(HaveKey(resourcesv1alpha1.NetworkingFromWorldToPorts))
	g.Expect(svc.Annotations).To(HaveKey(resourcesv1alpha1.NetworkPolicyFromPolicyAnnotationPrefix +
		v1beta1constants.LabelNetworkPolicySeedScrapeTargets + resourcesv1alpha1.NetworkPolicyFromPolicyAnnotationSuffix))
	for _, p := range svc.Spec.Ports {
		if p.Name == "webhooks" {
			g.Expect(p.Port).To(Equal(int32(443)))
			g.Expect(p.TargetPort.StrVal).To(Equal("webhooks"), "the annotation names the container port, 9443")
		}
	}
}

// The ports in the annotations follow the values; without webhooks there is nothing to open for the
// apiserver; podLabels and service.annotations add to (and override) the Gardener set; the switch off
// leaves only what the operator names.
func TestDruidNetworkLabelValues(t *testing.T) {
	t.Run("ports follow the values", func(t *testing.T) {
		g := NewWithT(t)
		objs := render(t, charts.EtcdDruid, "druid", map[string]any{"metricsPort": 9090, "webhooks": map[string]any{"port": 10250}})
		g.Expect(find[corev1.Service](t, objs, "Service", "druid").Annotations).To(Equal(map[string]string{
			"networking.resources.gardener.cloud/from-world-to-ports":                        `[{"protocol":"TCP","port":10250}]`,
			"networking.resources.gardener.cloud/from-all-seed-scrape-targets-allowed-ports": `[{"protocol":"TCP","port":9090}]`,
		}))
	})
	t.Run("webhooks off", func(t *testing.T) {
		g := NewWithT(t)
		objs := render(t, charts.EtcdDruid, "druid", map[string]any{"webhooks": map[string]any{"enabled": false}})
		g.Expect(find[corev1.Service](t, objs, "Service", "druid").Annotations).To(Equal(map[string]string{
			"networking.resources.gardener.cloud/from-all-seed-scrape-targets-allowed-ports": `[{"protocol":"TCP","port":8080}]`,
		}))
	})
	t.Run("operator's labels and annotations", func(t *testing.T) {
		g := NewWithT(t)
		objs := render(t, charts.EtcdDruid, "druid", map[string]any{
			"podLabels": map[string]any{
				"networking.resources.gardener.cloud/to-all-shoots-etcd-events-client-tcp-8080": "allowed",
				"networking.gardener.cloud/to-dns":                                              "disallowed",
				"team":                                                                          true,
			},
			"service": map[string]any{"annotations": map[string]any{
				"networking.resources.gardener.cloud/from-world-to-ports": `[{"protocol":"TCP","port":9443},{"protocol":"TCP","port":8081}]`,
				"example.com/owner": "etcd",
			}},
		})
		labels := find[appsv1.Deployment](t, objs, "Deployment", "druid").Spec.Template.Labels
		g.Expect(labels).To(HaveKeyWithValue("networking.resources.gardener.cloud/to-all-shoots-etcd-events-client-tcp-8080", "allowed"))
		g.Expect(labels).To(HaveKeyWithValue("networking.gardener.cloud/to-dns", "disallowed"), "the operator's value wins")
		g.Expect(labels).To(HaveKeyWithValue("networking.gardener.cloud/to-runtime-apiserver", "allowed"))
		g.Expect(labels).To(HaveKeyWithValue("team", "true"))
		g.Expect(labels).To(HaveKeyWithValue("app.kubernetes.io/name", "etcd-druid"))
		g.Expect(find[corev1.Service](t, objs, "Service", "druid").Annotations).To(Equal(map[string]string{
			"networking.resources.gardener.cloud/from-world-to-ports":                        `[{"protocol":"TCP","port":9443},{"protocol":"TCP","port":8081}]`,
			"networking.resources.gardener.cloud/from-all-seed-scrape-targets-allowed-ports": `[{"protocol":"TCP","port":8080}]`,
			"example.com/owner": "etcd",
		}))
	})
	t.Run("switch off", func(t *testing.T) {
		g := NewWithT(t)
		objs := render(t, charts.EtcdDruid, "druid", map[string]any{
			"gardener":  map[string]any{"networkPolicyLabels": false},
			"podLabels": map[string]any{"team": "etcd"},
		})
		deploy := find[appsv1.Deployment](t, objs, "Deployment", "druid")
		g.Expect(deploy.Spec.Template.Labels).To(Equal(map[string]string{
			"app.kubernetes.io/name": "etcd-druid", "app.kubernetes.io/instance": "druid",
			"app.kubernetes.io/version": deploy.Labels["app.kubernetes.io/version"], "app.kubernetes.io/part-of": "gardener-etcd",
			"team": "etcd",
		}))
		g.Expect(find[corev1.Service](t, objs, "Service", "druid").Annotations).To(BeEmpty())
	})
}

// A podLabels entry under one of the chart's own label keys would change the pod's identity (the selector
// and druid's NetworkPolicies select by them): refused, naming the value.
func TestDruidPodLabelsRefuseChartLabels(t *testing.T) {
	_, err := chartrender.RenderEmbedded(charts.EtcdDruid, chartrender.Release{Name: "druid", Namespace: "garden"},
		map[string]any{"podLabels": map[string]any{"app.kubernetes.io/name": "other"}})
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("podLabels: app.kubernetes.io/name is a label of the chart")))
}
