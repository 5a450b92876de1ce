package role

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

const (
	ourImage      = "example.org/etcdbrctl:v1"
	upstreamImage = "europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl:v0.40.0"
)

var images = config.Images{EtcdWrapper: "example.org/etcd-wrapper:v1", BackupRestore: ourImage,
	Compatibility: imagecaps.Config{Mode: imagecaps.ModeAuto}}

// ourRules are what our sidecar calls: get and update of the member and snapshot leases, nothing else.
var ourRules = []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "update"}}}

// upstreamRules are upstream etcd-druid's Role, which the upstream sidecar is written against.
var upstreamRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "patch", "update", "watch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "list", "patch", "update", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
}

func etcdWith(backupImage string) *druidv1alpha1.Etcd {
	e := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"}}
	if backupImage != "" {
		e.Spec.Backup.Image = ptr.To(backupImage)
	}
	return e
}

func statefulSetRunning(image string) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"}}
	sts.Spec.Template.Spec.Containers = []corev1.Container{{Name: etcdpod.ContainerBackupRestore, Image: image}}
	return sts
}

func podRunning(image string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main-0", Namespace: "shoot", Labels: druidv1alpha1.ManagedLabels(etcdWith(""))}}
	pod.Spec.Containers = []corev1.Container{{Name: etcdpod.ContainerBackupRestore, Image: image}}
	return pod
}

// The Role is narrowed to what our sidecar calls while every sidecar that runs or will run is ours, and
// is upstream's Role as long as an upstream sidecar runs or is rendered (the Etcd's image, the
// StatefulSet's template, a pod not yet rolled).
func TestRulesFollowTheSidecarsThatRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		etcd     *druidv1alpha1.Etcd
		existing []client.Object
		want     []rbacv1.PolicyRule
	}{
		{"our image, nothing runs yet", etcdWith(""), nil, ourRules},
		{"our image everywhere", etcdWith(""), []client.Object{statefulSetRunning(ourImage), podRunning(ourImage)}, ourRules},
		{"an upstream image in the spec", etcdWith(upstreamImage), nil, upstreamRules},
		{"moving from upstream: the StatefulSet still renders it", etcdWith(""), []client.Object{statefulSetRunning(upstreamImage)}, upstreamRules},
		{"moving from upstream: a pod still runs it", etcdWith(""), []client.Object{statefulSetRunning(ourImage), podRunning(upstreamImage)}, upstreamRules},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = corev1.AddToScheme(scheme)
			_ = appsv1.AddToScheme(scheme)
			_ = rbacv1.AddToScheme(scheme)
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.existing...).Build()
			got := &rbacv1.Role{}
			if err := desired(component.Uncached(c), images)(t.Context(), tc.etcd, got); err != nil {
				t.Fatal(err)
			}
			if len(got.Rules) != len(tc.want) {
				t.Fatalf("rules = %+v, want %+v", got.Rules, tc.want)
			}
			for i := range tc.want {
				if g, w := got.Rules[i], tc.want[i]; !equalRule(g, w) {
					t.Errorf("rule %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func equalRule(a, b rbacv1.PolicyRule) bool {
	eq := func(x, y []string) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	return eq(a.APIGroups, b.APIGroups) && eq(a.Resources, b.Resources) && eq(a.Verbs, b.Verbs) && eq(a.ResourceNames, b.ResourceNames)
}
