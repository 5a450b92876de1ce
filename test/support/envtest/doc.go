// Package envtest starts a real kube-apiserver and etcd, built by `make tools`, with the project's CRDs
// installed, for integration tests. It works from plain `go test` (Main, Start) and from ginkgo suites
// (Start in BeforeSuite, Stop in AfterSuite).
//
// The control-plane processes are started through `setpriv --pdeathsig KILL`, so they die with the test
// binary even when it crashes or times out before Stop runs: no test leaves an apiserver behind.
package envtest
