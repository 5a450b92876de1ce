// Package etcd is the Gardener-side etcd component: it writes the Etcd resource of one role (main or events)
// in a shoot's control-plane namespace for etcd-druid to run, with the TLS secrets its caller's TLSSource
// supplies (tls_source.go; by default the project's generator, tls.go) and
// the backup store it takes from the shoot's BackupEntry, and it waits until druid reports
// the cluster ready (waiter.go).
package etcd

import (
	"context"
	"fmt"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Roles of the two etcds of a shoot control plane.
const (
	// RoleMain is the etcd of the shoot's kube-apiserver; it is backed up.
	RoleMain = "main"
	// RoleEvents holds only Kubernetes events; losing it loses nothing that matters, so it has no backup.
	RoleEvents = "events"
)

// Class tells how much the etcd matters; it decides the default storage capacity. (Whether an etcd is backed
// up follows from its role: only main is.)
type Class string

const (
	// ClassImportant is the class of etcd-main.
	ClassImportant Class = "important"
	// ClassNormal is the class of etcd-events.
	ClassNormal Class = "normal"
)

// Interface is the etcd component of one role in one control-plane namespace, as the shoot flow drives it:
// Deploy, then Wait; Destroy, then WaitCleanup.
type Interface interface {
	// Deploy asks the TLS source (Values.TLS) for its secrets, checks every secret the Etcd references and
	// writes the Etcd with the operation annotation so that druid reconciles it. It returns a *MissingSecretError (retriable) and
	// writes nothing while a referenced secret or key is missing. It also writes Gardener's ServiceMonitor and
	// PrometheusRule shoot-etcd-<role> (monitoring.go), or only logs that it skips them on a cluster without
	// the Prometheus Operator's API.
	Deploy(ctx context.Context) error
	// Destroy deletes the Etcd and its monitoring objects; missing ones are not an error.
	Destroy(ctx context.Context) error
	// Wait blocks until druid reconciled the last Deploy and reports the cluster ready, or times out with an
	// error that says what was still missing.
	Wait(ctx context.Context) error
	// WaitCleanup blocks until the Etcd is gone.
	WaitCleanup(ctx context.Context) error
	// Snapshot asks the backup-restore sidecar for a final full snapshot and returns its answer.
	Snapshot(ctx context.Context) (string, error)
	// CopyBackups copies the backups of a control-plane migration's source into the main etcd's store before
	// its first Deploy on the destination seed (copybackups.go).
	CopyBackups(ctx context.Context, source RestoreSource) error
	// Scale changes only the number of members (and enables peer TLS when going beyond one).
	Scale(ctx context.Context, replicas int32) error
	// SetBackupConfig sets (or with nil clears) the backup configuration used by the next Deploy.
	SetBackupConfig(config *BackupConfig)
	// RolloutPeerCA replaces the peer CA of a running cluster in three rollouts without breaking quorum.
	RolloutPeerCA(ctx context.Context) error
	// Get returns the current Etcd.
	Get(ctx context.Context) (*druidv1alpha1.Etcd, error)
}

// Values configure the etcd of one role. Fields left empty are kept from the existing Etcd where that
// matters (replicas, storage, schedules, backup store) so that a Deploy never undoes what druid, a webhook or
// an earlier Deploy settled.
type Values struct {
	// Role is main or events; it names the Etcd etcd-<role>.
	Role string
	// Class is ClassImportant for main and ClassNormal for events when empty.
	Class Class
	// Replicas is the number of members; nil keeps the existing value (1, or 3 with HighAvailability, on
	// creation; an existing single member becomes 3 when HighAvailability is set).
	Replicas *int32
	// StorageCapacity of each member's volume; an existing larger capacity is kept (volumes do not shrink).
	StorageCapacity *resource.Quantity
	// StorageClass of the volumes; only used on creation since it is immutable.
	StorageClass *string
	// DefragmentationSchedule is the cron schedule of a new Etcd (nil: one derived in the maintenance
	// window). An existing Etcd keeps its schedule unless that runs every N days (N > 1), Gardener's old
	// default.
	DefragmentationSchedule *string
	// FullSnapshotSchedule is the cron schedule of a new Etcd's full snapshots (nil: a daily one derived
	// in the maintenance window). An existing Etcd keeps its schedule, as with Gardener.
	FullSnapshotSchedule *string
	// DeltaSnapshotPeriod is how often the main etcd's sidecar uploads a delta snapshot (DefaultDeltaSnapshotPeriod
	// when zero). It also bounds what a quorum-loss recovery loses, and BackupReady turns False after three
	// periods without a snapshot; end-to-end tests shorten it to see both within minutes.
	DeltaSnapshotPeriod time.Duration
	// DeltaSnapshotRetentionPeriod is how long the main etcd's garbage collection keeps delta snapshots of
	// older full snapshot sets; zero writes none on a new Etcd (the sidecar's default, the latest set only),
	// as gardenlet does without etcdConfig.deltaSnapshotRetentionPeriod, and keeps an existing Etcd's
	// (DefaultDeltaSnapshotRetentionPeriod is what Gardener's own tests configure).
	DeltaSnapshotRetentionPeriod time.Duration
	// HighAvailability runs three members with peer TLS.
	HighAvailability bool
	// FailureToleranceType of a highly available etcd (FailureToleranceTypeNode when empty and
	// HighAvailability is set); it decides how strictly the members spread (topologySpreadConstraints).
	FailureToleranceType FailureToleranceType
	// Zones is the number of availability zones the members may run in (the seed's zones); more than one
	// spreads the members of a multi-member etcd over zones unless the failure tolerance is node.
	Zones int32
	// BackupConfig names the BackupEntry whose store the main etcd backs up to; nil keeps the existing store.
	BackupConfig *BackupConfig
	// MaintenanceWindow is where derived schedules are placed (DefaultMaintenanceWindow when nil).
	MaintenanceWindow *MaintenanceWindow
	// PriorityClassName of the etcd pods (DefaultPriorityClassName when empty).
	PriorityClassName string

	// Inputs gardenlet's etcd component takes from the Shoot and its own configuration (gardenlet_values.go
	// says how gardenlet derives them).
	//
	// MinAllowed replaces, per resource, the VPA's floor for the etcd container (the shoot's
	// spec.kubernetes.etcd.<role>.autoscaling.minAllowed); the Etcd's requests never lie below it.
	MinAllowed corev1.ResourceList
	// Purpose is the shoot's purpose: the important etcd of a production or infrastructure shoot is
	// never evicted to scale it down.
	Purpose Purpose
	// ScaleDownDisabled is the shoot's scale-down-disabled annotation: the VPA never evicts to scale down,
	// whatever the class.
	ScaleDownDisabled bool
	// BackupLeaderElection tunes how the sidecars of a backed-up etcd elect the one that takes snapshots
	// (gardenlet's etcdConfig.backupLeaderElection); nil leaves druid's defaults.
	BackupLeaderElection *druidv1alpha1.LeaderElectionSpec
	// TopologyAwareRoutingEnabled has the client Service prefer members in the client's own zone
	// (spec.etcd.clientService.trafficDistribution, routing.go); written or removed on every Deploy.
	// gardenlet enables it when the seed's settings enable topology-aware routing and the shoot's control
	// plane is multi-zonal.
	TopologyAwareRoutingEnabled bool
	// RuntimeKubernetesVersion is the seed's Kubernetes version; required with TopologyAwareRoutingEnabled,
	// it names the traffic distribution (PreferSameZone from 1.34 on, PreferClose before).
	RuntimeKubernetesVersion *semver.Version
	// MemberNamePrefix prefixes the etcd member names of a new Etcd (spec.memberNamePrefix) so that members
	// are told apart across a control-plane migration between seeds; gardenlet passes the seed's name when
	// its etcdConfig enables the feature gate UpgradeEtcdVersion. An existing Etcd keeps what it was created
	// with, none included: the field is immutable, and the names are in the cluster's membership.
	MemberNamePrefix string

	// --- TLS: which secrets the Etcd references and who writes them (tls_source.go) ---
	// TLS supplies the CA bundles and certificates the Etcd references; Deploy only references what it
	// returns and checks that it exists. Nil is the project's generator (NewGeneratedTLS with the
	// component's client and Clock), which writes ca-etcd, ca-etcd-peer, etcd-server-<role>, etcd-client and
	// etcd-peer-server-<role> and never touches a secret it did not create. ExistingTLS references secrets
	// someone else keeps under fixed names; gardenersecrets.New adapts gardenlet's secrets manager (its
	// hashed names and CA bundles) for a shoot whose TLS gardenlet owns. Only sources that keep their names
	// when the content changes get PeerTLSChecksumAnnotation (ContentNamedTLS).
	TLS TLSSource
	// --- end of TLS ---

	// Clock stamps gardener.cloud/timestamp and dates certificates (time.Now when nil).
	Clock func() time.Time
	// WaitTimeout bounds Wait, WaitCleanup and the wait for the BackupEntry (DefaultWaitTimeout when zero).
	WaitTimeout time.Duration
	// WaitInterval is how often the waits look (DefaultWaitInterval when zero).
	WaitInterval time.Duration
	// SnapshotTransport reaches the sidecar; tests point it at a local server.
	SnapshotTransport SnapshotTransport
	// PeerCARolloutWait waits for the rollout after each step of RolloutPeerCA (Wait when nil); tests play
	// druid here.
	PeerCARolloutWait func(ctx context.Context, phase PeerCARotationPhase) error
}

// Defaults of Values.
const (
	DefaultWaitTimeout       = 5 * time.Minute
	DefaultWaitInterval      = 5 * time.Second
	DefaultPriorityClassName = "gardener-system-500"
	// DefaultDeltaSnapshotPeriod is Gardener's delta snapshot period.
	DefaultDeltaSnapshotPeriod = 5 * time.Minute
	// DefaultDeltaSnapshotRetentionPeriod is a delta snapshot retention for Values (15 days, what
	// Gardener's tests configure); Deploy writes a retention only when Values ask for one.
	DefaultDeltaSnapshotRetentionPeriod = 15 * 24 * time.Hour
)

type etcd struct {
	client    client.Client
	namespace string
	values    Values
}

// New returns the etcd component of values.Role in namespace.
func New(c client.Client, namespace string, values Values) Interface {
	if values.Class == "" {
		values.Class = ClassNormal
		if values.Role == RoleMain {
			values.Class = ClassImportant
		}
	}
	if values.Clock == nil {
		values.Clock = time.Now
	}
	if values.WaitTimeout == 0 {
		values.WaitTimeout = DefaultWaitTimeout
	}
	if values.WaitInterval == 0 {
		values.WaitInterval = DefaultWaitInterval
	}
	if values.PriorityClassName == "" {
		values.PriorityClassName = DefaultPriorityClassName
	}
	if values.HighAvailability && values.FailureToleranceType == "" {
		values.FailureToleranceType = FailureToleranceTypeNode
	}
	return &etcd{client: c, namespace: namespace, values: values}
}

// Name is the name of the Etcd of a role.
func Name(role string) string { return "etcd-" + role }

func (e *etcd) name() string { return Name(e.values.Role) }

// emptyEtcd is the Etcd addressed by name only, for Get and Delete.
func (e *etcd) emptyEtcd() *druidv1alpha1.Etcd {
	return &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: e.name(), Namespace: e.namespace}}
}

func (e *etcd) logger(ctx context.Context) logr.Logger {
	return logf.FromContext(ctx).WithValues("etcd", client.ObjectKey{Namespace: e.namespace, Name: e.name()})
}

func (e *etcd) SetBackupConfig(config *BackupConfig) { e.values.BackupConfig = config }

func (e *etcd) Get(ctx context.Context) (*druidv1alpha1.Etcd, error) {
	obj := e.emptyEtcd()
	if err := e.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// getExisting returns the Etcd or nil when it does not exist yet.
func (e *etcd) getExisting(ctx context.Context) (*druidv1alpha1.Etcd, error) {
	obj, err := e.Get(ctx)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Etcd %s/%s: %w", e.namespace, e.name(), err)
	}
	return obj, nil
}
