package druid

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/gardener-etcd/gardener-etcd/charts"
)

// TestChartValuesBootstrapDecides: caller extras survive, but auto-reconcile and the webhook certificate are
// always the bootstrap's, and the caller's map is not modified.
func TestChartValuesBootstrapDecides(t *testing.T) {
	extras := map[string]any{
		"controllers": map[string]any{"etcd": map[string]any{"workers": 9, "enableEtcdSpecAutoReconcile": true}},
		"webhooks":    map[string]any{"exemptServiceAccounts": []any{"system:serviceaccount:garden:tool"}},
	}
	b := &bootstrap{namespace: "garden", values: Values{ChartValues: extras, Replicas: ptr.To(int32(2))}}
	objs, err := b.render([]byte("CA"))
	if err != nil {
		t.Fatal(err)
	}
	var args string
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			args = strings.Join(stringSlice(containers[0].(map[string]any)["args"]), " ")
		}
	}
	for _, want := range []string{"--etcd-workers=9", "--enable-etcd-spec-auto-reconcile=false", "--exempt-service-accounts=system:serviceaccount:garden:tool"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
	if extras["controllers"].(map[string]any)["etcd"].(map[string]any)["enableEtcdSpecAutoReconcile"] != true {
		t.Error("the caller's values were modified")
	}
}

func TestInUseErrorNamesResources(t *testing.T) {
	err := &InUseError{Resources: []string{"Etcd a/etcd-main", "Etcd b/etcd-main", "Etcd c/etcd-main", "Etcd d/etcd-main", "Etcd e/etcd-main", "EtcdCopyBackupsTask f/copy"}}
	msg := err.Error()
	for _, want := range []string{"6 resource(s)", "Etcd a/etcd-main", "and 1 more"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
}

func stringSlice(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// TestChartImagesAreVersionedOrPinned: the chart's images default to its appVersion (never "latest"), the
// etcd images follow druid's registry path, and a digest given with Values.Image pins druid's image.
func TestChartImagesAreVersionedOrPinned(t *testing.T) {
	version, err := charts.AppVersion(charts.EtcdDruid)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		image     string
		wantImage string
		wantArgs  []string
	}{
		"defaults": {wantImage: "ghcr.io/gardener-etcd/etcd-druid:" + version, wantArgs: []string{
			"--etcd-wrapper-image=ghcr.io/gardener-etcd/etcd-wrapper:" + version,
			"--backup-restore-image=ghcr.io/gardener-etcd/etcdbrctl:" + version}},
		"pinned by digest": {image: "registry.local:5000/x/etcd-druid@sha256:0123", wantImage: "registry.local:5000/x/etcd-druid@sha256:0123",
			wantArgs: []string{"--etcd-wrapper-image=registry.local:5000/x/etcd-wrapper:" + version}},
		"another tag": {image: "registry.local:5000/x/etcd-druid:v7", wantImage: "registry.local:5000/x/etcd-druid:v7",
			wantArgs: []string{"--etcd-wrapper-image=registry.local:5000/x/etcd-wrapper:v7", "--backup-restore-image=registry.local:5000/x/etcdbrctl:v7"}},
	} {
		t.Run(name, func(t *testing.T) {
			b := &bootstrap{namespace: "garden", values: Values{Image: tc.image}}
			objs, err := b.render([]byte("CA"))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if o.GetKind() != "Deployment" {
					continue
				}
				containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				container := containers[0].(map[string]any)
				if container["image"] != tc.wantImage {
					t.Errorf("image %v, want %s", container["image"], tc.wantImage)
				}
				args := strings.Join(stringSlice(container["args"]), " ")
				for _, want := range tc.wantArgs {
					if !strings.Contains(args, want) {
						t.Errorf("args %q lack %s", args, want)
					}
				}
				if strings.Contains(args+container["image"].(string), ":latest") {
					t.Errorf("an image is tagged latest: %s %s", container["image"], args)
				}
			}
		})
	}
}
