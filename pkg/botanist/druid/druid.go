// Package druid is the seed bootstrap of etcd-druid: it installs the druid CRDs and the objects of
// charts/etcd-druid (rendered with Helm's engine, so `helm install` and the bootstrap cannot disagree) with
// a generated webhook serving certificate and spec auto-reconcile off, as Gardener runs druid. Destroy
// refuses while any Etcd, EtcdCopyBackupsTask or EtcdOpsTask exists: removing druid under running clusters would leave
// them unmanaged, and removing the CRDs would delete them.
package druid

import (
	"context"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Names of what the bootstrap creates.
const (
	// Name is the release name: ServiceAccount, ClusterRole, Deployment and Service are called so.
	Name = "etcd-druid"
	// WebhookSecretName holds the CA and the serving certificate of druid's webhooks.
	WebhookSecretName = "etcd-druid-webhook-server"
	// FieldOwner is the server-side apply field manager of the bootstrap.
	FieldOwner = "gardener-etcd-seed-bootstrap"
)

// Defaults of the waits and the certificate renewal.
const (
	DefaultWaitTimeout  = 5 * time.Minute
	DefaultWaitInterval = 2 * time.Second
	// CertificateRenewBefore: a serving certificate that expires sooner is replaced on Deploy.
	CertificateRenewBefore = 30 * 24 * time.Hour
)

// Values configure the bootstrap.
type Values struct {
	// Image of etcd-druid as repository[:tag][@digest] (a digest pins it); the chart's default when empty.
	Image string
	// EtcdWrapperImage and BackupRestoreImage are the images druid puts into etcd pods; chart defaults when empty.
	EtcdWrapperImage   string
	BackupRestoreImage string
	// Replicas of the druid Deployment; the chart's default when nil.
	Replicas *int32
	// ChartValues are further chart values, merged under the ones above.
	ChartValues map[string]any
	// Clock dates certificates (time.Now when nil).
	Clock func() time.Time
	// WaitTimeout bounds Wait (DefaultWaitTimeout when zero); WaitInterval is how often it looks.
	WaitTimeout  time.Duration
	WaitInterval time.Duration
}

// Interface is the seed bootstrap component.
type Interface interface {
	// Deploy installs or updates the CRDs and druid; idempotent.
	Deploy(ctx context.Context) error
	// Wait returns when the CRDs are established and the druid Deployment is available.
	Wait(ctx context.Context) error
	// Destroy removes druid and the CRDs, unless Etcds, EtcdCopyBackupsTasks or EtcdOpsTasks exist (then *InUseError).
	Destroy(ctx context.Context) error
}

// New returns the bootstrap component for druid in namespace.
func New(c client.Client, namespace string, values Values) Interface {
	if values.Clock == nil {
		values.Clock = time.Now
	}
	if values.WaitTimeout == 0 {
		values.WaitTimeout = DefaultWaitTimeout
	}
	if values.WaitInterval == 0 {
		values.WaitInterval = DefaultWaitInterval
	}
	return &bootstrap{client: c, namespace: namespace, values: values}
}

type bootstrap struct {
	client    client.Client
	namespace string
	values    Values
}

// InUseError is Destroy's refusal: druid still has resources to manage.
type InUseError struct {
	// Resources are `<kind> <namespace>/<name>` of what still exists.
	Resources []string
}

func (e *InUseError) Error() string {
	shown := e.Resources
	more := ""
	if len(shown) > 5 {
		shown, more = shown[:5], fmt.Sprintf(" and %d more", len(e.Resources)-5)
	}
	return fmt.Sprintf("refusing to remove etcd-druid: %d resource(s) still exist and would lose their operator: %s%s",
		len(e.Resources), strings.Join(shown, ", "), more)
}
