// Package apis tests the CRDs on a real kube-apiserver: what users apply is stored unchanged, invalid
// objects are rejected with a message naming the field, and the printer columns and scale subresource work.
package apis

import (
	"testing"

	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) {
	envtest.Main(m, &env)
}
