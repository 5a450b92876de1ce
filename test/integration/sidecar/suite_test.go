// Package sidecar tests `etcdbrctl server` as a whole, in-process: the sidecar (sidecar.Run) beside the
// etcd wrapper (wrapper.Run, restarted like a container when it exits) running real embedded etcd
// members, a real Local store on disk and the snapshot leases on an envtest apiserver.
package sidecar

import (
	"testing"

	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Main(m, &env) }
