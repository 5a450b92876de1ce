package envtest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	druidcrds "github.com/gardener/etcd-druid/api/core/v1alpha1/crds"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/gardener-etcd/gardener-etcd/charts"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis"
	"github.com/gardener-etcd/gardener-etcd/pkg/vpa"
)

// The apiserver of a busy 2-core machine needs longer than envtest's 20 s default when several suites start
// at once; a start that really hangs still fails within a minute.
const (
	startTimeout = 60 * time.Second
	stopTimeout  = 30 * time.Second
)

// Scheme knows the Kubernetes built-in types, apiextensions and both project API groups.
var Scheme = apis.NewScheme()

// Options tune the environment. The zero value installs every CRD of the project and no webhooks.
type Options struct {
	// Webhooks are registered with the apiserver and served by the test (see envtest.WebhookInstallOptions).
	Webhooks envtest.WebhookInstallOptions
	// APIServerFlags are set on kube-apiserver's command line (name without dashes → value), e.g. a
	// service-cluster-ip-range wider than envtest's /24 for benchmarks with hundreds of Services.
	APIServerFlags map[string]string
	// EtcdFlags are set on etcd's command line the same way, e.g. enable-pprof for a benchmark's profiles.
	EtcdFlags map[string]string
	// GardenletEtcdCRD installs upstream etcd-druid's Etcd CRD variant with CEL rules (what gardenlet
	// installs on Kubernetes >= 1.29) instead of the chart's variant without them, for suites that show what
	// the apiserver itself refuses under gardenlet.
	GardenletEtcdCRD bool
}

// Env is a running control plane.
type Env struct {
	*envtest.Environment
	// Config reaches the apiserver as an administrator.
	Config *rest.Config
	// Client is a controller-runtime client on Config with Scheme.
	Client client.Client

	wrapperDir string
	tempDirs   []string
}

// Start starts etcd and kube-apiserver and installs the CRDs. Call Stop when done.
func Start(opts Options) (*Env, error) {
	binDir, err := BinDir()
	if err != nil {
		return nil, err
	}
	assets, err := wrapBinaries(binDir)
	if err != nil {
		return nil, err
	}
	crds, err := charts.CRDs()
	if err != nil {
		return nil, err
	}
	if opts.GardenletEtcdCRD {
		if crds, err = withGardenletEtcdCRD(crds); err != nil {
			return nil, err
		}
	}
	vpaCRDs, err := vpa.CRDs()
	if err != nil {
		return nil, err
	}
	crds = append(crds, vpaCRDs...)
	e := &Env{
		Environment: &envtest.Environment{
			BinaryAssetsDirectory:    assets,
			CRDInstallOptions:        envtest.CRDInstallOptions{CRDs: crds},
			ErrorIfCRDPathMissing:    true,
			WebhookInstallOptions:    opts.Webhooks,
			Scheme:                   Scheme,
			ControlPlaneStartTimeout: startTimeout,
			ControlPlaneStopTimeout:  stopTimeout,
		},
	}
	if assets != binDir {
		e.wrapperDir = assets
	}
	// Explicit paths: envtest prefers $KUBEBUILDER_ASSETS (which the Makefile exports) over
	// BinaryAssetsDirectory, which would start the real binaries without the parent-death wrapper.
	e.Environment.ControlPlane.GetAPIServer().Path = filepath.Join(assets, "kube-apiserver")
	if e.Environment.ControlPlane.Etcd == nil {
		e.Environment.ControlPlane.Etcd = &envtest.Etcd{}
	}
	e.Environment.ControlPlane.Etcd.Path = filepath.Join(assets, "etcd")
	for name, value := range opts.APIServerFlags {
		e.Environment.ControlPlane.GetAPIServer().Configure().Set(name, value)
	}
	for name, value := range opts.EtcdFlags {
		e.Environment.ControlPlane.Etcd.Configure().Set(name, value)
	}
	if e.Config, err = e.Environment.Start(); err != nil {
		_ = e.Stop()
		return nil, fmt.Errorf("starting envtest with binaries from %s: %w", binDir, err)
	}
	if e.Client, err = client.New(e.Config, client.Options{Scheme: Scheme}); err != nil {
		_ = e.Stop()
		return nil, err
	}
	return e, nil
}

// Stop stops the control plane and removes its temporary directories.
func (e *Env) Stop() error {
	err := e.Environment.Stop()
	if e.wrapperDir != "" {
		_ = os.RemoveAll(e.wrapperDir)
	}
	for _, dir := range e.tempDirs {
		_ = os.RemoveAll(dir)
	}
	return err
}

// TempDir creates a directory that lives as long as the control plane and is removed by Stop: package-wide
// state a TestMain setup needs (MainWith exits the process, so a deferred removal there never runs).
func (e *Env) TempDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err == nil {
		e.tempDirs = append(e.tempDirs, dir)
	}
	return dir, err
}

// Main runs a package's tests against one shared control plane: call it from TestMain. It stores the
// running Env in *env, runs the tests, stops the control plane and exits with the tests' code.
//
// Under `go test -short` (make test-unit) it skips the package instead, so unit runs need no binaries.
func Main(m *testing.M, env **Env) {
	MainWith(m, env, Options{}, nil)
}

// MainWith is Main with options and a setup function that runs after the control plane is up, e.g. to
// start a manager with controllers or webhook servers. The context passed to setup is cancelled after the
// tests ran, before the control plane stops.
func MainWith(m *testing.M, env **Env, opts Options, setup func(ctx context.Context, env *Env) error) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("envtest: skipping integration tests in -short mode")
		os.Exit(0)
	}
	os.Exit(runMain(m, env, opts, setup))
}

func runMain(m *testing.M, env **Env, opts Options, setup func(ctx context.Context, env *Env) error) (code int) {
	e, err := Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	*env = e
	defer func() {
		if err := e.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "envtest: stopping:", err)
			if code == 0 {
				code = 1
			}
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if setup != nil {
		if err := setup(ctx, e); err != nil {
			fmt.Fprintln(os.Stderr, "envtest: setup:", err)
			return 1
		}
	}
	return m.Run()
}

// CreateNamespace creates a namespace with a generated name for one test and deletes it at its end.
func (e *Env) CreateNamespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating a test namespace: %v", err)
	}
	t.Cleanup(func() { _ = e.Client.Delete(context.Background(), ns) })
	return ns.Name
}

// withGardenletEtcdCRD replaces the Etcd CRD in crds with upstream etcd-druid's variant with CEL rules, from
// the API module go.mod pins (the one its crds.GetAll returns for Kubernetes 1.29 and later).
func withGardenletEtcdCRD(crds []*apiextensionsv1.CustomResourceDefinition) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	all, err := druidcrds.GetAll("1.29")
	if err != nil {
		return nil, err
	}
	withCEL := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(all[druidcrds.ResourceNameEtcd]), withCEL); err != nil {
		return nil, fmt.Errorf("decoding upstream's Etcd CRD with CEL: %w", err)
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(crds))
	for _, crd := range crds {
		if crd.Name == druidcrds.ResourceNameEtcd {
			crd = withCEL
		}
		out = append(out, crd)
	}
	return out, nil
}
