package hostile

import (
	"bytes"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// ExampleEtcd is example/etcd.yaml in namespace: the base every row of Etcds changes. The example's secret
// references name its own namespace; they are moved to namespace, as secrets live in the Etcd's namespace.
func ExampleEtcd(namespace string) (*druidv1alpha1.Etcd, error) {
	root, err := envtest.ProjectRoot()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "example", "etcd.yaml"))
	if err != nil {
		return nil, err
	}
	data = bytes.ReplaceAll(data, []byte("namespace: shoot--dev--demo"), []byte("namespace: "+namespace))
	etcd := &druidv1alpha1.Etcd{}
	if err := yaml.UnmarshalStrict(data, etcd); err != nil {
		return nil, err
	}
	etcd.Namespace = namespace
	return etcd, nil
}
