package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// leaseFresh bounds a member lease's age while its member runs: the sidecar renews every heartbeat (10 s
// by default), and druid calls a lease Unknown after a minute.
const leaseFresh = 30 * time.Second

// memberLeaseNames are etcd-main's member leases.
func (s *Suite) memberLeaseNames(ctx context.Context) ([]string, error) {
	obj := &druidv1alpha1.Etcd{}
	if err := s.Env.Client.Get(ctx, client.ObjectKey{Namespace: s.Env.Namespace, Name: etcd.Name(etcd.RoleMain)}, obj); err != nil {
		return nil, err
	}
	return druidv1alpha1.MemberLeaseNames(obj), nil
}

// watchLeasesFor checks every few seconds for d that every member lease was renewed within leaseFresh,
// and fails with the oldest it saw otherwise. It notes the oldest age seen.
func (s *Suite) watchLeasesFor(ctx context.Context, r *Round, d time.Duration) error {
	names, err := s.memberLeaseNames(ctx)
	if err != nil {
		return err
	}
	end := time.Now().Add(d)
	var oldest time.Duration
	var stale []string
	for time.Now().Before(end) {
		for _, name := range names {
			l := &coordinationv1.Lease{}
			if err := s.Env.Client.Get(ctx, client.ObjectKey{Namespace: s.Env.Namespace, Name: name}, l); err != nil {
				return err
			}
			if l.Spec.RenewTime == nil {
				stale = append(stale, name+" never renewed")
				continue
			}
			age := time.Since(l.Spec.RenewTime.Time)
			oldest = max(oldest, age)
			if age > leaseFresh {
				stale = append(stale, fmt.Sprintf("%s %s old", name, age.Round(time.Second)))
			}
		}
		if err := pause(ctx, min(5*time.Second, time.Until(end))); err != nil {
			return err
		}
	}
	r.Note("oldest member lease seen: %s", oldest.Round(time.Second))
	if len(stale) > 0 {
		return fmt.Errorf("member leases went stale: %s", strings.Join(stale[:min(5, len(stale))], ", "))
	}
	return nil
}

// staleLeases holds the leases of two members (a majority) stale for d while every member serves: it sets
// their renewTime ten minutes back again and again, faster than the sidecars renew them, as the etcd
// pods' service account (what a sidecar with a clock far behind would write; druid's protection webhook
// lets nobody else touch the leases). Druid must not take the stale leases for a quorum loss (the pods
// and etcd containers are Ready), so no recovery may start.
func staleLeases(d time.Duration) func(ctx context.Context, r *Round) (string, error) {
	return func(ctx context.Context, r *Round) (string, error) {
		s := r.Suite
		names, err := s.memberLeaseNames(ctx)
		if err != nil {
			return "", err
		}
		cfg := s.Seed.RESTConfig()
		cfg.Impersonate = rest.ImpersonationConfig{UserName: serviceaccount.MakeUsername(s.Env.Namespace, etcd.Name(etcd.RoleMain))}
		sidecar, err := client.New(cfg, client.Options{Scheme: seedworkflow.Scheme})
		if err != nil {
			return "", err
		}
		slices.Sort(names)
		r.Rand.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		victims := names[:len(names)/2+1]
		target := strings.Join(victims, ", ")
		end := time.Now().Add(d)
		rewrites := 0
		for time.Now().Before(end) {
			for _, name := range victims {
				l := &coordinationv1.Lease{}
				if err := s.Env.Client.Get(ctx, client.ObjectKey{Namespace: s.Env.Namespace, Name: name}, l); err != nil {
					return target, err
				}
				if l.Spec.RenewTime != nil && time.Since(l.Spec.RenewTime.Time) > 5*time.Minute {
					continue // still stale
				}
				// An update, as the sidecar renews (its Role grants get and update on leases, nothing else); a
				// renewal in between is a conflict, taken again on the next pass.
				l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now().Add(-10 * time.Minute)}
				if err := sidecar.Update(ctx, l); apierrors.IsConflict(err) {
					continue
				} else if err != nil {
					return target, fmt.Errorf("making lease %s stale: %w", name, err)
				}
				rewrites++
			}
			if err := pause(ctx, 200*time.Millisecond); err != nil {
				return target, err
			}
		}
		r.Note("renewTime set back %d times", rewrites)
		return target, nil
	}
}

// frozenSidecars freezes the backup-restore containers of two members (a majority) for d while their etcd
// containers serve: their leases go stale — a finding of the security review, renewals stopped while the cluster is
// fine. Past druid's grace periods (d longer than 1 + 5 minutes) druid sees a quorum loss by the leases,
// but the pods and etcd containers are Ready, so it must hold back (LeaseRenewalSuspected) and start no
// recovery.
func frozenSidecars(d time.Duration) func(ctx context.Context, r *Round) (string, error) {
	return func(ctx context.Context, r *Round) (string, error) {
		s := r.Suite
		pods, err := s.memberPods(ctx)
		if err != nil {
			return "", err
		}
		names := slices.Sorted(maps.Keys(pods))
		r.Rand.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		victims := names[:len(names)/2+1]
		slices.Sort(victims)
		target := strings.Join(victims, ", ")
		var errs []error
		for _, name := range victims {
			pod := pods[name]
			n, id := node{ctr: s.ctr, name: pod.Spec.NodeName}, containerID(pod, etcdpod.ContainerBackupRestore)
			if err := n.pauseTask(ctx, id); err != nil {
				errs = append(errs, err)
				continue
			}
			defer func() {
				if err := n.resumeTask(context.WithoutCancel(ctx), id); err != nil {
					r.Note("resuming %s: %v", name, err)
				}
			}()
		}
		if len(errs) == 0 {
			errs = append(errs, pause(ctx, d))
		}
		return target, errors.Join(errs...)
	}
}
