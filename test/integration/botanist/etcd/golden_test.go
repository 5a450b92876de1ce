package etcd_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden-*.yaml from what Deploy writes")

// written is what the golden files pin of one Deploy: the Etcd's and the VPA's labels, annotations and
// spec (no status, no server-set metadata).
type written struct {
	EtcdLabels      map[string]string `json:"etcdLabels"`
	EtcdAnnotations map[string]string `json:"etcdAnnotations"`
	EtcdSpec        any               `json:"etcdSpec"`
	VPALabels       map[string]string `json:"vpaLabels"`
	VPAAnnotations  map[string]string `json:"vpaAnnotations"`
	VPASpec         any               `json:"vpaSpec"`
}

// The Etcd and VPA Deploy writes for the inputs of Gardener's own component tests (etcd-main, important,
// with backup; etcd-events, normal; etcd-main highly available with three members, topology-aware routing
// and a member name prefix), pinned so that any
// drift from what gardenlet writes shows up as a diff of testdata/golden-*.yaml. The namespace, the
// BackupEntry, the bucket and the peer TLS checksum vary per run and are replaced by placeholders.
// Rewrite with: go test ./test/integration/botanist/etcd/ -run TestGolden -update-golden
func TestGoldenEtcdAndVPAForGardenersInputs(t *testing.T) {
	window := &etcd.MaintenanceWindow{Begin: "220000+0100", End: "230000+0100"}
	cases := map[string]func(s shoot) etcd.Values{
		"main-important-backup": func(s shoot) etcd.Values {
			v := s.mainValues()
			v.Replicas = ptr.To[int32](1)
			return v
		},
		"events-normal": func(shoot) etcd.Values {
			v := values(etcd.RoleEvents)
			v.Replicas = ptr.To[int32](1)
			return v
		},
		// A multi-zonal HA control plane on a seed with topology-aware routing, gardenlet with the
		// UpgradeEtcdVersion feature gate (the seed's name prefixes the member names).
		"main-ha-3-replicas": func(s shoot) etcd.Values {
			v := s.mainValues()
			v.Replicas, v.HighAvailability, v.Purpose = ptr.To[int32](3), true, etcd.PurposeProduction
			v.TopologyAwareRoutingEnabled, v.RuntimeKubernetesVersion = true, semver.MustParse("1.34.1")
			v.MemberNamePrefix = "aws-eu1"
			return v
		},
	}
	for name, valuesOf := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			s := newShoot(t)
			v := valuesOf(s)
			v.MaintenanceWindow = window
			v.DefragmentationSchedule, v.FullSnapshotSchedule = ptr.To("34 21 * * *"), ptr.To("5 21 * * *")
			v.Clock = (&fixedClock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}).Now
			g.Expect(etcd.New(env.Client, s.namespace, v).Deploy(ctx)).To(Succeed())

			obj := getEtcd(g, s.namespace, etcd.Name(v.Role))
			vpa := getVPA(g, s.namespace, etcd.Name(v.Role))
			if sum, ok := obj.Spec.Annotations[etcd.PeerTLSChecksumAnnotation]; ok {
				obj.Spec.Annotations[etcd.PeerTLSChecksumAnnotation] = strings.Repeat("0", len(sum))
			}
			out, err := yaml.Marshal(written{obj.Labels, obj.Annotations, obj.Spec, vpa.Labels, vpa.Annotations, vpa.Spec})
			g.Expect(err).NotTo(HaveOccurred())
			got := strings.NewReplacer(s.entry, "BACKUP_ENTRY", s.namespace, "NAMESPACE", s.bucket, "BUCKET").Replace(string(out))

			path := filepath.Join("testdata", "golden-"+name+".yaml")
			if *updateGolden {
				g.Expect(os.MkdirAll("testdata", 0o755)).To(Succeed())
				g.Expect(os.WriteFile(path, []byte(got), 0o644)).To(Succeed())
			}
			want, err := os.ReadFile(path)
			g.Expect(err).NotTo(HaveOccurred(), "no golden file yet: run with -update-golden")
			g.Expect(got).To(Equal(string(want)))
		})
	}
}
