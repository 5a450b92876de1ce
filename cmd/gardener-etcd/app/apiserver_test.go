package app

import (
	"sync"
	"testing"

	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// The operator commands' tests share one control plane, started by the first test that needs it, so the
// package's other tests (the local seed's, root only) do not pay for it.
var (
	sharedEnvOnce sync.Once
	sharedEnv     *envtest.Env
	sharedEnvErr  error
)

// stopAPIServer stops the shared control plane if a test started it; TestMain calls it with the tests' exit
// code and exits with the result (a failed stop fails the run).
func stopAPIServer(code int) int {
	if sharedEnv != nil {
		if err := sharedEnv.Stop(); err != nil && code == 0 {
			return 1
		}
	}
	return code
}

// apiserver returns the shared control plane (a real kube-apiserver with the project's CRDs), starting it
// on first use; it skips under -short, where unit runs need no binaries.
func apiserver(t *testing.T) *envtest.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a kube-apiserver (envtest); skipped under -short")
	}
	sharedEnvOnce.Do(func() { sharedEnv, sharedEnvErr = envtest.Start(envtest.Options{}) })
	if sharedEnvErr != nil {
		t.Fatalf("starting envtest: %v", sharedEnvErr)
	}
	return sharedEnv
}
