// Package apis tests the CRDs on a real kube-apiserver: what users apply is stored unchanged, invalid
// objects are rejected with a message naming the field, and the printer columns and scale subresource work.
// The Etcd CRD is the variant gardenlet installs (upstream's, with CEL rules), so that what the apiserver
// itself refuses in a Gardener seed is shown; the chart's variant without CEL rules leaves those checks to
// druid's webhook and druid (test/integration/webhook, the druid suites).
package apis

import (
	"testing"

	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	envtest.MainWith(m, &env, envtest.Options{GardenletEtcdCRD: true}, nil)
}
