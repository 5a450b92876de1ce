package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// AnnotationTLSEnabled is the member lease annotation druid reads before scaling up.
const AnnotationTLSEnabled = "member.etcd.gardener.cloud/tls-enabled"

// AnnotationMovedAside lists (comma-separated) the data directories the sidecar's initializer moved aside
// and keeps on the volume, e.g. /var/etcd/data/new.etcd.invalid-20260102T150405Z; absent when there are
// none.
const AnnotationMovedAside = "member.etcd.gardener.cloud/moved-aside-data-dirs"

// localMemberTimeout bounds the read of the local member at a beat. etcd's client waits for a connection
// that is not ready, so without a bound a beat whose etcd does not run would wait until etcd runs again,
// and nothing of the beat — the no-leader report of a member that lost its data — would be written.
const localMemberTimeout = 5 * time.Second

// Roles in holderIdentity.
const (
	RoleLeader = "Leader"
	RoleMember = "Member"
)

// HolderIdentity formats the member lease's holderIdentity.
func HolderIdentity(l *member.Local) string {
	role := RoleMember
	if l.Leader {
		role = RoleLeader
	}
	return fmt.Sprintf("%x:%x:%s", l.Member.ID, l.ClusterID, role)
}

// PeerTLSEnabled is the annotation value for a member: whether the cluster knows it by https peer URLs only.
func PeerTLSEnabled(l *member.Local) bool { return memberconfig.AllHTTPS(l.Member.PeerURLs) }

// MemberLease renews the lease named after the member (druid creates it empty).
type MemberLease struct {
	Kubernetes kubernetes.Interface
	Namespace  string
	// Name is the lease name, which is the etcd member name.
	Name string
	// Etcd and LocalEndpoint reach the local member.
	Etcd          *clientv3.Client
	LocalEndpoint string
	// MovedAside lists the data directories the initializer moved aside and kept (nil: none reported);
	// they appear in AnnotationMovedAside so that an operator finds data that is not served.
	MovedAside func() []string
	// NoSpaceCannotRecover is why the backup leader's NOSPACE recovery cannot disarm the alarm, "" when it
	// can (nil: never reported); it appears in AnnotationNoSpaceCannotRecover.
	NoSpaceCannotRecover func() string
	// NoLeader reports, in podwire.AnnotationNoLeader, that this member sees no leader (nil: never
	// reported). It is asked at every beat, also when the local etcd does not answer.
	NoLeader *NoLeaderWatch
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	Log logr.Logger
}

// Renew reads the local member's state from etcd and writes it into the lease. When the local etcd does
// not answer, the lease is not renewed; only the no-leader report is written (NoLeader).
func (m *MemberLease) Renew(ctx context.Context) error {
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	localCtx, cancel := context.WithTimeout(ctx, localMemberTimeout)
	local, err := member.LocalMember(localCtx, m.Etcd, m.LocalEndpoint)
	cancel()
	if err != nil {
		if m.NoLeader != nil {
			report := m.NoLeader.WithoutLocalEtcd(ctx, now())
			if werr := m.writeNoLeaderOnly(ctx, report); werr != nil {
				return errors.Join(err, werr)
			}
		}
		return err
	}
	// One instant for the renewal and the no-leader report: druid counts a report observed before the
	// lease's renewal as stale.
	at := now()
	var noLeader string
	if m.NoLeader != nil {
		noLeader = m.NoLeader.WithLocalEtcd(ctx, m.Etcd, m.LocalEndpoint, at)
	}
	holder := HolderIdentity(local)
	tls := strconv.FormatBool(PeerTLSEnabled(local))
	var aside []string
	if m.MovedAside != nil {
		aside = m.MovedAside()
	}
	alarms, alarmsRead := activeAlarms(ctx, m.Etcd)
	var cannotRecover string
	if m.NoSpaceCannotRecover != nil {
		cannotRecover = m.NoSpaceCannotRecover()
	}
	err = m.updateLease(ctx, func(lease *coordinationv1.Lease) bool {
		renew := metav1.NewMicroTime(at)
		lease.Spec.HolderIdentity, lease.Spec.RenewTime = &holder, &renew
		if lease.Annotations[AnnotationTLSEnabled] != tls {
			m.Log.Info("Peer TLS state of the member changed", "member", m.Name, "tlsEnabled", tls)
		}
		lease.Annotations[AnnotationTLSEnabled] = tls
		setOrDelete(lease.Annotations, AnnotationMovedAside, strings.Join(aside, ","))
		setOrDelete(lease.Annotations, AnnotationNoSpaceCannotRecover, cannotRecover)
		setOrDelete(lease.Annotations, podwire.AnnotationNoLeader, noLeader)
		if alarmsRead {
			if lease.Annotations[AnnotationAlarms] != alarms {
				m.Log.Info("Active etcd alarms changed", "member", m.Name, "alarms", alarms)
			}
			lease.Annotations[AnnotationAlarms] = alarms
		} else {
			// Not read (no quorum, a slow member): what the lease said may no longer hold, so it says nothing.
			delete(lease.Annotations, AnnotationAlarms)
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("renewing member lease %s/%s: %w", m.Namespace, m.Name, err)
	}
	return nil
}

// writeNoLeaderOnly writes the no-leader report ("" removes it) and nothing else: renewTime and
// holderIdentity stay as the last renewal of a serving etcd left them.
func (m *MemberLease) writeNoLeaderOnly(ctx context.Context, report string) error {
	return m.updateLease(ctx, func(lease *coordinationv1.Lease) bool {
		if lease.Annotations[podwire.AnnotationNoLeader] == report {
			return false
		}
		if report != "" && lease.Annotations[podwire.AnnotationNoLeader] == "" {
			m.Log.Info("Reporting no leader while the local etcd does not run", "member", m.Name, "report", report)
		}
		setOrDelete(lease.Annotations, podwire.AnnotationNoLeader, report)
		return true
	})
}

// updateLease reads the member lease, lets change modify it (its annotations never nil) and writes it back
// when change says so, reading and changing it again after a conflicting write.
func (m *MemberLease) updateLease(ctx context.Context, change func(*coordinationv1.Lease) bool) error {
	leases := m.Kubernetes.CoordinationV1().Leases(m.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lease, err := leases.Get(ctx, m.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		if !change(lease) {
			return nil
		}
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		return err
	})
}

// setOrDelete sets annotations[key] to value, or deletes the key when value is empty.
func setOrDelete(annotations map[string]string, key, value string) {
	if value == "" {
		delete(annotations, key)
		return
	}
	annotations[key] = value
}

// Run calls renew now and then every interval until ctx ends; failures are logged and retried at the
// next beat.
func Run(ctx context.Context, interval time.Duration, renew func(context.Context) error, log logr.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := renew(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "Heartbeat failed; retrying at the next beat")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
