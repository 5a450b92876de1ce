package sidecar

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/httpapi"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// decisionInitializer runs the initialization decision table (package initializer) every time the wrapper is about
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
	// store is nil without backups.
	store snapstore.SnapStore
	// restoreSource is where a new cluster restores from (nil: none); see initializer.Options.RestoreSource.
	restoreSource *initializer.RestoreSource
	// fullSnapshot uploads the full snapshot after a restore (case 7); nil without backups.
	fullSnapshot func(ctx context.Context, cli *clientv3.Client) error
	// livePeers reports the other members whose leases show a serving etcd (nil without member lease
	// renewal: there is no evidence to read then).
	livePeers func(ctx context.Context, others []string) ([]string, error)
	// leftCluster tells whether the backup leader marked this member's lease as removed from the cluster
	// (nil without member lease renewal: no mark to read).
	leftCluster func(ctx context.Context, member string) (bool, error)
	// clusterIDs are the cluster IDs the given members' leases record (nil without member lease renewal:
	// nothing recorded).
	clusterIDs func(ctx context.Context, members []string) ([]uint64, error)
	// joinedExisting tells whether any of the given members' leases carries druid's mark that the Etcd
	// joined its existing cluster (nil without member lease renewal: no mark to read).
	joinedExisting func(ctx context.Context, members []string) (bool, error)
	// metrics outlive each initialization: validations, restores and learner additions of the process.
	metrics *initializer.Metrics
	log     logr.Logger
}

var _ httpapi.Initializer = (*decisionInitializer)(nil)

// Initialize implements httpapi.Initializer.
func (d *decisionInitializer) Initialize(ctx context.Context, mode podwire.InitMode) error {
	t, err := memberconfig.LoadTemplate(d.served.templatePath)
	if err != nil {
		return err
	}
	ic, err := t.InitialCluster()
	if err != nil {
		return err
	}
	existing, err := t.ExistingCluster()
	if err != nil {
		return err
	}
	ord := initializer.Ordinal(d.served.pod)
	if ord >= len(ic) {
		err := fmt.Errorf("%w: ordinal %d of pod %s is beyond the cluster size %d of the configuration; its pod goes once the membership has shrunk",
			errScaledIn, ord, d.served.pod, len(ic))
		d.log.Info("Refusing to initialize: " + err.Error())
		return err
	}
	cfg, err := memberconfig.Resolve(t, d.served.pod, nil)
	if err != nil {
		return err
	}
	leftClusterCheck, err := d.checkLeftCluster(ctx, ord, cfg.Member.Name)
	if err != nil {
		d.log.Info("Refusing to initialize: " + err.Error())
		return err
	}
	var ownClusterID uint64
	var joined bool
	var clusterIDCheck func(context.Context, initializer.Case) error
	if len(existing) > 0 {
		ownClusterID, clusterIDCheck = d.recordedClusterID(ctx, ic)
		joined = d.joinedExistingCluster(ctx, ic)
	}
	in, err := initializer.New(initializer.Options{
		Member: cfg.Member, InitialCluster: ic, ExistingCluster: existing, OwnClusterID: ownClusterID, JoinedExistingCluster: joined, MemberEndpoints: t.AllClientURLs(), DataDir: d.dataDir, ClusterToken: t.ClusterToken(), Owner: d.owner,
		ClusterEndpoints: append(t.AllClientURLs(), d.serviceEndpoints...), ServiceEndpoints: ownService(d.serviceEndpoints, d.owner), ClientTLS: d.clientTLS,
		Store: d.store, RestoreSource: d.restoreSource, TakeFullSnapshot: d.fullSnapshot, LivePeers: d.livePeers, BeforeChange: allOf(leftClusterCheck, clusterIDCheck),
		Metrics: d.metrics, Log: d.log,
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

// ownService picks the Etcd's client Service out of --service-endpoints by its name,
// <etcd>-client.<namespace>.svc, as druid (ours and the upstream one) passes it. The others are the client
// endpoints of a cluster the Etcd joined (spec.etcd.bootstrapWithExistingCluster): they may serve another
// cluster once that one is gone, while a pod not rolled since still carries them, so the initializer's
// shortcut through the Service never takes them. owner is "<namespace>/<etcd>" (ownerOf).
func ownService(serviceEndpoints []string, owner string) []string {
	namespace, etcd, ok := strings.Cut(owner, "/")
	if !ok {
		return nil
	}
	host := druidv1alpha1.ClientServiceName(&druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: etcd}}) + "." + namespace + ".svc"
	var own []string
	for _, ep := range serviceEndpoints {
		if u, err := url.Parse(ep); err == nil && (u.Hostname() == host || strings.HasPrefix(u.Hostname(), host+".")) {
			own = append(own, ep)
		}
	}
	return own
}

// errScaledIn refuses the initialization of a member that a scale-in removes: it must neither start,
// nor join the cluster again as a new member, nor restore a cluster of its own from the backups. Its
// member was (or is about to be) removed by the backup leader, and its pod is deleted once the membership
// has shrunk; a member that joined again would be a voter whose pod goes next, taking quorum with it.
var errScaledIn = errors.New("this member is being scaled in")

// errLeftClusterUnknown refuses an initialization that would add this member to the cluster again,
// restore or create a data directory while its left-cluster mark cannot be read: no answer is no evidence
// that the member stays, and a member the backup leader removed must not join again (errScaledIn).
var errLeftClusterUnknown = errors.New("whether this member was removed from the cluster is unknown")

// checkLeftCluster refuses the initialization while the backup leader's left-cluster mark is on this
// member's lease. The ordinal check in Initialize covers a template that already shows the smaller
// cluster; the mark covers the time the kubelet still shows this pod the old one. The leader removes the
// mark when the cluster size grows past this member again (a scale-in undone), so that it may join anew.
//
// A lease that cannot be read (the apiserver is down or out of reach) refuses only what the mark guards:
// the returned initializer.Options.BeforeChange refuses every case but reusing valid data as it is
// (errLeftClusterUnknown; the wrapper fails and asks again until the apiserver answers). A member whose
// data directory holds its own member ID restarts without the mark, because etcd itself refuses a member
// ID the cluster removed; refusing it too would keep a member that crashed (OOM, liveness) down for as
// long as the apiserver is away, and with a second one the cluster's quorum. A missing lease carries no
// mark (druid creates the leases; a woken-up cluster starts with empty ones). The first member (ordinal
// 0) is never scaled in, as a scale-in keeps at least one member, so its lease is not read and it may
// restore a single-member cluster while the apiserver is away.
func (d *decisionInitializer) checkLeftCluster(ctx context.Context, ordinal int, member string) (beforeChange func(context.Context, initializer.Case) error, err error) {
	if d.leftCluster == nil || ordinal == 0 {
		return nil, nil
	}
	left, readErr := d.leftCluster(ctx, member)
	if readErr != nil {
		d.log.Error(readErr, "Could not read the left-cluster mark of this member's lease; valid data is reused as it is, nothing else is done until the mark can be read",
			"member", member)
		return func(_ context.Context, c initializer.Case) error {
			return fmt.Errorf("%w: the left-cluster mark on the lease of member %s cannot be read (%w); refusing %s until it can",
				errLeftClusterUnknown, member, readErr, c)
		}, nil
	}
	if left {
		return nil, fmt.Errorf("%w: the backup leader removed member %s from the cluster (left-cluster mark on its lease); its pod goes once the membership has shrunk",
			errScaledIn, member)
	}
	return nil, nil
}

// errOwnClusterUnknown refuses an initialization that would join a cluster or change the data directory of
// a member whose Etcd names an existing cluster while the cluster its members run cannot be told from the
// member leases: the source's endpoints might serve another cluster by now.
var errOwnClusterUnknown = errors.New("which etcd cluster this Etcd runs is unknown")

// recordedClusterID is the cluster ID this Etcd's member leases record, for a member of an Etcd that
// names an existing (source) cluster (initializer.Options.OwnClusterID): the member must join the
// cluster its Etcd's members run, never whatever answers at the source's endpoints. 0 while no lease
// records one (the first members join the source). Leases that cannot be read, or that record more than
// one cluster (druid's ClusterIDMismatch), leave the cluster unknown: the returned check then refuses
// every case but reusing valid data as it is (errOwnClusterUnknown; the wrapper asks again).
func (d *decisionInitializer) recordedClusterID(ctx context.Context, own memberconfig.InitialCluster) (uint64, func(context.Context, initializer.Case) error) {
	if d.clusterIDs == nil {
		return 0, nil
	}
	names := make([]string, 0, len(own))
	for _, m := range own {
		names = append(names, m.Name)
	}
	ids, err := d.clusterIDs(ctx, names)
	var why string
	switch {
	case err != nil:
		why = fmt.Sprintf("the member leases cannot be read (%v)", err)
	case len(ids) > 1:
		why = fmt.Sprintf("the member leases record several cluster IDs (%s)", hexIDs(ids))
	case len(ids) == 1:
		return ids[0], nil
	default:
		return 0, nil
	}
	d.log.Info("Only valid data is reused as it is: " + why)
	return 0, func(_ context.Context, c initializer.Case) error {
		return fmt.Errorf("%w: %s; refusing %s until they tell", errOwnClusterUnknown, why, c)
	}
}

// joinedExistingCluster tells whether the Etcd's members joined its existing cluster before (druid's mark
// on the member leases; initializer.Options.JoinedExistingCluster). Leases that cannot be read count as
// joined: a member without data then waits for its own members rather than join whatever answers at the
// source's endpoints.
func (d *decisionInitializer) joinedExistingCluster(ctx context.Context, own memberconfig.InitialCluster) bool {
	if d.joinedExisting == nil {
		return false
	}
	names := make([]string, 0, len(own))
	for _, m := range own {
		names = append(names, m.Name)
	}
	joined, err := d.joinedExisting(ctx, names)
	if err != nil {
		d.log.Info("Whether the Etcd joined its existing cluster before cannot be read from the member leases; taking it as joined", "error", err.Error())
		return true
	}
	return joined
}

// hexIDs lists cluster IDs as etcd prints them.
func hexIDs(ids []uint64) string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, fmt.Sprintf("%x", id))
	}
	return strings.Join(out, ", ")
}

// allOf is a check that asks each of checks (nil ones are skipped) and fails with the first error; nil
// when there is none to ask.
func allOf(checks ...func(context.Context, initializer.Case) error) func(context.Context, initializer.Case) error {
	var set []func(context.Context, initializer.Case) error
	for _, c := range checks {
		if c != nil {
			set = append(set, c)
		}
	}
	if len(set) == 0 {
		return nil
	}
	return func(ctx context.Context, c initializer.Case) error {
		for _, check := range set {
			if err := check(ctx, c); err != nil {
				return err
			}
		}
		return nil
	}
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
