// Package druid_test checks the seed bootstrap against a real apiserver: the chart's objects apply, a second
// bootstrap changes nothing, Wait follows the Deployment's status (written by the test, as there is no
// Deployment controller), and Destroy refuses while an Etcd exists.
package druid_test

import (
	"testing"

	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Main(m, &env) }
