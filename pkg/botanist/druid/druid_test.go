package druid

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

func TestSplitImage(t *testing.T) {
	for image, want := range map[string][2]string{
		"etcd-druid":                        {"etcd-druid", ""},
		"ghcr.io/x/etcd-druid:v1":           {"ghcr.io/x/etcd-druid", "v1"},
		"registry.local:5000/etcd-druid":    {"registry.local:5000/etcd-druid", ""},
		"registry.local:5000/etcd-druid:v2": {"registry.local:5000/etcd-druid", "v2"},
	} {
		if repo, tag := splitImage(image); repo != want[0] || tag != want[1] {
			t.Errorf("%s: got %s %s, want %v", image, repo, tag, want)
		}
	}
}

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
