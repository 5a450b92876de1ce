package apis

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// TestExamplesRoundTrip applies every object of example/ and reads it back: the spec (and status, where
// given) must come back as identical JSON, which fails when the CRD schema prunes a field the Go types
// know. Decoding strictly into the Go types also fails when an example uses a field the types lack.
func TestExamplesRoundTrip(t *testing.T) {
	root, err := envtest.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "example", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("want at least three examples, found %v (%v)", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			g := NewWithT(t)
			data, err := os.ReadFile(file)
			g.Expect(err).NotTo(HaveOccurred())

			obj := &unstructured.Unstructured{}
			g.Expect(yaml.Unmarshal(data, &obj.Object)).To(Succeed())
			typed, err := env.Scheme.New(obj.GroupVersionKind())
			g.Expect(err).NotTo(HaveOccurred(), "the example's kind is registered")
			g.Expect(yaml.UnmarshalStrict(data, typed)).To(Succeed(), "every field of the example is known to the Go types")

			if obj.GetNamespace() != "" {
				obj.SetNamespace(env.CreateNamespace(t))
			}
			want := obj.DeepCopy()
			ctx := context.Background()
			g.Expect(env.Client.Create(ctx, obj)).To(Succeed())
			t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })

			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(obj.GroupVersionKind())
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
			g.Expect(toJSON(t, got.Object["spec"])).To(MatchJSON(toJSON(t, want.Object["spec"])))
			g.Expect(got.GetLabels()).To(Equal(want.GetLabels()))
			g.Expect(got.GetAnnotations()).To(Equal(want.GetAnnotations()))
		})
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// readExample decodes one example into a typed object.
func readExample[T runtime.Object](t *testing.T, name string, into T) T {
	t.Helper()
	root, err := envtest.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "example", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatal(err)
	}
	return into
}
