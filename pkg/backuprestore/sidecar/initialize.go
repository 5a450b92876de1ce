package sidecar

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/httpapi"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// decisionInitializer runs seed 002's decision table (package initializer) every time the wrapper is about
// to start etcd. It resolves the member from the template anew on each call, because druid's rolling
// updates change the template (peer URLs, cluster size) between etcd starts, and the decision must be
// taken for the configuration etcd is about to get. The outcome that matters to etcd's start — the
// member list of a cluster it joins as a learner — fixes the configuration /config serves next.
type decisionInitializer struct {
	served           *servedConfig
	dataDir          string
	owner            string
	serviceEndpoints []string
	clientTLS        *tls.Config
	// step35Binary and step36Binary are initializer.Options.Step35Binary and Step36Binary.
	step35Binary, step36Binary string
	// store is nil without backups.
	store snapstore.SnapStore
	// fullSnapshot uploads the full snapshot after a restore (case 7); nil without backups.
	fullSnapshot func(ctx context.Context, cli *clientv3.Client) error
	// livePeers reports the other members whose leases show a serving etcd (nil without member lease
	// renewal: there is no evidence to read then).
	livePeers func(ctx context.Context, others []string) ([]string, error)
	// metrics outlive each initialization: validations, restores and learner additions of the process.
	metrics *initializer.Metrics
	log     logr.Logger
}

var _ httpapi.Initializer = (*decisionInitializer)(nil)

// Initialize implements httpapi.Initializer.
func (d *decisionInitializer) Initialize(ctx context.Context, mode httpapi.Mode) error {
	t, err := memberconfig.LoadTemplate(d.served.templatePath)
	if err != nil {
		return err
	}
	cfg, err := memberconfig.Resolve(t, d.served.pod, nil)
	if err != nil {
		return err
	}
	ic, err := t.InitialCluster()
	if err != nil {
		return err
	}
	in, err := initializer.New(initializer.Options{
		Member: cfg.Member, InitialCluster: ic, DataDir: d.dataDir, ClusterToken: t.ClusterToken(), Owner: d.owner,
		ClusterEndpoints: append(t.AllClientURLs(), d.serviceEndpoints...), ClientTLS: d.clientTLS,
		Store: d.store, TakeFullSnapshot: d.fullSnapshot, LivePeers: d.livePeers, Metrics: d.metrics,
		Step35Binary: d.step35Binary, Step36Binary: d.step36Binary, Log: d.log,
	})
	if err != nil {
		return err
	}
	// A failed or new initialization must not leave an old join list or configuration for /config.
	d.served.reset()
	if err := in.Initialize(ctx, mode); err != nil {
		return err
	}
	return d.served.prepare(in.State().JoinMembers)
}

// ownerOf is the owner marker of the data directory: "<namespace>/<etcd>", the Etcd being the pod name
// without its StatefulSet ordinal. Empty (no safe-guard) when the namespace is unknown, e.g. outside a pod.
func ownerOf(namespace, pod string) string {
	if namespace == "" || pod == "" {
		return ""
	}
	etcd := pod
	if i := strings.LastIndexByte(pod, '-'); i > 0 && initializer.Ordinal(pod) >= 0 {
		etcd = pod[:i]
	}
	return fmt.Sprintf("%s/%s", namespace, etcd)
}
