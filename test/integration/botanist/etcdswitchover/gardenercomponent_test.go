package etcdswitchover_test

import (
	"context"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	gardenerkubernetes "github.com/gardener/gardener/pkg/client/kubernetes"
	gardeneretcd "github.com/gardener/gardener/pkg/component/etcd/etcd"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd/gardenersecrets"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/test/support/gardenletsecrets"
)

// gardenersComponentDeploy runs Gardener's own etcd component (pkg/component/etcd/etcd) with the values
// gardenlet's botanist gives a shoot's etcd-main (pkg/gardenlet/operation/botanist/etcd.go) and the secrets
// manager of one gardenlet reconcile, then ends the reconcile as gardenlet does (the secrets manager's
// Cleanup). What it writes is exactly what gardenlet leaves behind for the project's component.
func gardenersComponentDeploy(t *testing.T, namespace string, values gardeneretcd.Values) {
	t.Helper()
	ctx := context.Background()
	env.InstallMonitoringCRDs(t)
	c, err := client.New(env.Config, client.Options{Scheme: gardenerkubernetes.SeedScheme})
	if err != nil {
		t.Fatal(err)
	}
	sm := gardenletSecretsManager(t, namespace, gardenletsecrets.CARotation{})
	values.Class = gardeneretcd.ClassImportant
	values.StorageCapacity = "25Gi"
	values.PriorityClassName = etcd.DefaultPriorityClassName
	values.MaintenanceTimeWindow = gardencorev1beta1.MaintenanceTimeWindow{Begin: "220000+0000", End: "230000+0000"}
	values.DefragmentationSchedule = ptr.To("34 22 * * *") // the botanist derives one in the window
	if values.RuntimeKubernetesVersion == nil {
		values.RuntimeKubernetesVersion = semver.MustParse("1.34.0")
	}
	if err := gardeneretcd.New(logr.Discard(), c, namespace, sm, values).Deploy(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sm.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
}

// podTemplateChecksum is the checksum druid records for the pod template it renders from obj: a change of
// it is a rolling update of every member.
func podTemplateChecksum(g Gomega, obj *druidv1alpha1.Etcd) string {
	target := obj.DeepCopy()
	druidv1alpha1.SetDefaults(target)
	images := config.Images{EtcdWrapper: "example.org/etcd-wrapper:v1", BackupRestore: "example.org/etcdbrctl:v1"}
	rendered, err := statefulset.Render(context.Background(), env.Client, images, config.LocalBackup{}, target)
	g.Expect(err).NotTo(HaveOccurred())
	return rendered.Checksum
}

// ourDeploy is the project's component taking the shoot over on the next gardenlet reconcile: the secrets
// manager of that reconcile as TLS source.
func ourDeploy(t *testing.T, namespace string, values etcd.Values) {
	t.Helper()
	values.TLS = gardenersecrets.New(gardenletSecretsManager(t, namespace, gardenletsecrets.CARotation{}))
	if err := etcd.New(env.Client, namespace, values).Deploy(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A highly available etcd-main as Gardener's component wrote it (three members, peer TLS with the secrets
// manager's hashed names): the first Deploy of the project's component with gardenlet's secrets manager
// renders the same pod template, so druid rolls no member. The secrets manager's names change with their
// content, so no checksum annotation is needed (nor written) to roll the members on a new peer certificate.
func TestHASwitchOverWithTheSecretsManagerRollsNoMember(t *testing.T) {
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	gardenersComponentDeploy(t, namespace, gardeneretcd.Values{Role: etcd.RoleMain, Replicas: ptr.To[int32](3), HighAvailabilityEnabled: true})
	before := getEtcd(g, namespace, etcd.RoleMain)
	g.Expect(before.Spec.Etcd.PeerUrlTLS).NotTo(BeNil())

	ourDeploy(t, namespace, etcd.Values{Role: etcd.RoleMain, Replicas: ptr.To[int32](3), HighAvailability: true})

	after := getEtcd(g, namespace, etcd.RoleMain)
	g.Expect(podTemplateChecksum(g, after)).To(Equal(podTemplateChecksum(g, before)), "the first Deploy must not roll the members")
	g.Expect(after.Spec.Annotations).NotTo(HaveKey(etcd.PeerTLSChecksumAnnotation))
}

// An Etcd that carries the checksum annotation (written by an earlier Deploy with the project's generator)
// keeps it unchanged when the TLS source is the secrets manager: removing or changing it would roll every
// member for nothing.
func TestSecretsManagerSourceKeepsAnExistingPeerTLSChecksum(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	gardenersComponentDeploy(t, namespace, gardeneretcd.Values{Role: etcd.RoleMain, Replicas: ptr.To[int32](3), HighAvailabilityEnabled: true})
	obj := getEtcd(g, namespace, etcd.RoleMain)
	patch := client.MergeFrom(obj.DeepCopy())
	obj.Spec.Annotations = map[string]string{etcd.PeerTLSChecksumAnnotation: "written-before"}
	g.Expect(env.Client.Patch(ctx, obj, patch)).To(Succeed())

	ourDeploy(t, namespace, etcd.Values{Role: etcd.RoleMain, Replicas: ptr.To[int32](3), HighAvailability: true})

	g.Expect(getEtcd(g, namespace, etcd.RoleMain).Spec.Annotations).To(HaveKeyWithValue(etcd.PeerTLSChecksumAnnotation, "written-before"))
}

// For the inputs gardenlet's botanist passes, a new Etcd of the project's component carries the client
// Service's trafficDistribution and the member name prefix that Gardener's component gives a new one:
// PreferClose with topology-aware routing before Kubernetes 1.34, PreferSameZone from 1.34 on (pre-releases
// included), none without it; the prefix (the seed's name) as given.
func TestNewEtcdRoutesAndNamesMembersAsGardenersComponent(t *testing.T) {
	for name, in := range map[string]struct {
		topologyAwareRouting bool
		version              string
		memberNamePrefix     string
	}{
		"topology-aware routing, Kubernetes 1.33":             {topologyAwareRouting: true, version: "1.33.4"},
		"topology-aware routing, Kubernetes 1.34":             {topologyAwareRouting: true, version: "1.34.0"},
		"topology-aware routing, Kubernetes 1.34 pre-release": {topologyAwareRouting: true, version: "1.34.0-rc.1"},
		"no topology-aware routing, a member name prefix":     {version: "1.35.1", memberNamePrefix: "aws-eu1"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			version := semver.MustParse(in.version)
			gardeners := env.CreateNamespace(t)
			gardenersComponentDeploy(t, gardeners, gardeneretcd.Values{Role: etcd.RoleMain, Replicas: ptr.To[int32](1),
				TopologyAwareRoutingEnabled: in.topologyAwareRouting, RuntimeKubernetesVersion: version, MemberNamePrefix: in.memberNamePrefix})
			ours := env.CreateNamespace(t)
			ourDeploy(t, ours, etcd.Values{Role: etcd.RoleMain, Replicas: ptr.To[int32](1),
				TopologyAwareRoutingEnabled: in.topologyAwareRouting, RuntimeKubernetesVersion: version, MemberNamePrefix: in.memberNamePrefix})

			want, got := getEtcd(g, gardeners, etcd.RoleMain), getEtcd(g, ours, etcd.RoleMain)
			g.Expect(got.Spec.Etcd.ClientService.TrafficDistribution).To(Equal(want.Spec.Etcd.ClientService.TrafficDistribution))
			g.Expect(got.Spec.MemberNamePrefix).To(Equal(want.Spec.MemberNamePrefix))
			if in.topologyAwareRouting {
				g.Expect(got.Spec.Etcd.ClientService.TrafficDistribution).NotTo(BeNil())
			}
			if in.memberNamePrefix != "" {
				g.Expect(got.Spec.MemberNamePrefix).To(HaveValue(Equal(in.memberNamePrefix)))
			}
		})
	}
}

// Over an Etcd Gardener's component wrote, the member name prefix stays what the Etcd was created with
// (spec.memberNamePrefix is immutable: the members' names are in the cluster's membership), whatever the
// Values say, and trafficDistribution follows the Values on every Deploy, as with Gardener's component
// (a shoot that is no longer multi-zonal loses it).
func TestDeployOverGardenersEtcdKeepsTheMemberNamePrefixAndFollowsTopologyAwareRouting(t *testing.T) {
	version := semver.MustParse("1.34.2")
	for name, in := range map[string]struct{ existing, asked string }{
		"created without, asked for one":      {asked: "aws-eu1"},
		"created with one, asked for another": {existing: "aws-eu1", asked: "aws-eu2"},
		"created with one, asked for none":    {existing: "aws-eu1"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			namespace := env.CreateNamespace(t)
			gardenersComponentDeploy(t, namespace, gardeneretcd.Values{Role: etcd.RoleMain, Replicas: ptr.To[int32](1),
				TopologyAwareRoutingEnabled: true, RuntimeKubernetesVersion: version, MemberNamePrefix: in.existing})
			before := getEtcd(g, namespace, etcd.RoleMain)
			g.Expect(before.Spec.Etcd.ClientService.TrafficDistribution).To(HaveValue(Equal("PreferSameZone")))

			ourDeploy(t, namespace, etcd.Values{Role: etcd.RoleMain, Replicas: ptr.To[int32](1),
				RuntimeKubernetesVersion: version, MemberNamePrefix: in.asked})

			after := getEtcd(g, namespace, etcd.RoleMain)
			g.Expect(after.Spec.MemberNamePrefix).To(Equal(before.Spec.MemberNamePrefix))
			g.Expect(after.Spec.Etcd.ClientService.TrafficDistribution).To(BeNil())
		})
	}
}
