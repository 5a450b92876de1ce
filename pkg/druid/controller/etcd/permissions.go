package etcd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/permissions"
)

// ConditionTypeComponentPermissionsMissing is True while druid skips optional components of the Etcd
// because its role does not allow them; the message names the components and the permissions. The Etcd is
// otherwise reconciled as usual and can be Ready: the skipped components harden a cluster, they do not run
// it. A role extended later takes effect with druid's next start (the permissions are probed at start-up).
const ConditionTypeComponentPermissionsMissing druidv1alpha1.ConditionType = "ComponentPermissionsMissing"

// Reasons of ConditionTypeComponentPermissionsMissing, and the event of a skipped component.
const (
	ReasonPermissionsMissing               = "PermissionsMissing"
	ReasonPermissionsGranted               = "PermissionsGranted"
	EventReasonComponentPermissionsMissing = "ComponentPermissionsMissing"
)

// optionalComponents are the kinds druid skips when its role lacks what managing them takes.
var optionalComponents = map[component.Kind][]permissions.Permission{
	component.KindNetworkPolicy: permissions.NetworkPolicies,
}

// missingPermissions is what druid's role does not allow, as probed at start-up.
type missingPermissions struct {
	// components are the skipped optional kinds with their missing permissions.
	components map[component.Kind][]permissions.Permission
	// pvcDeletion is missing when the quorum-loss recovery may not delete the members' data volumes, as at
	// start-up (logged then); the recovery asks again each time it would start (missingPVCDeletion).
	pvcDeletion []permissions.Permission
}

// missingPVCDeletion asks the apiserver now whether druid may delete the members' data volumes, the step
// of the quorum-loss recovery gardenlet's role does not grant (heal.Deps.MissingPVCDeletion).
func (r *Reconciler) missingPVCDeletion(ctx context.Context) ([]permissions.Permission, error) {
	return permissions.Missing(ctx, r.client, permissions.PVCDeletion)
}

// missingRelocationPermissions asks the apiserver now what of the member relocation's permissions druid's
// role does not grant (heal.Deps.MissingRelocationPermissions).
func (r *Reconciler) missingRelocationPermissions(ctx context.Context) ([]permissions.Permission, error) {
	return permissions.Missing(ctx, r.client, permissions.MemberRelocation)
}

// probePermissions asks the apiserver what druid's identity may do.
func probePermissions(ctx context.Context, c client.Client) (missingPermissions, error) {
	m := missingPermissions{components: map[component.Kind][]permissions.Permission{}}
	for kind, wanted := range optionalComponents {
		missing, err := permissions.Missing(ctx, c, wanted)
		if err != nil {
			return m, err
		}
		if len(missing) > 0 {
			m.components[kind] = missing
		}
	}
	var err error
	m.pvcDeletion, err = permissions.Missing(ctx, c, permissions.PVCDeletion)
	return m, err
}

// skippedKinds are the components druid does not manage, in sync order.
func (m missingPermissions) skippedKinds() []component.Kind {
	var kinds []component.Kind
	for _, kind := range component.SyncOrder {
		if _, ok := m.components[kind]; ok {
			kinds = append(kinds, kind)
		}
	}
	return kinds
}

// message names each skipped component and the permissions it lacks.
func (m missingPermissions) message() string {
	var parts []string
	for _, kind := range m.skippedKinds() {
		parts = append(parts, fmt.Sprintf("%s skipped: druid's role does not allow %s", kind, permissions.Join(m.components[kind])))
	}
	return strings.Join(parts, "; ")
}

// reportSkipped emits the event of the spec run that skipped components.
func (r *Reconciler) reportSkipped(etcd *druidv1alpha1.Etcd) {
	if len(r.missing.components) == 0 {
		return
	}
	r.recorder.Eventf(etcd, nil, corev1.EventTypeWarning, EventReasonComponentPermissionsMissing, actionReconcile, "%s", r.missing.message())
}

// withPermissionsCondition is mutate that also sets ConditionTypeComponentPermissionsMissing: True while
// components are skipped; False once they no longer are (an Etcd that never had one skipped gets none).
func (r *Reconciler) withPermissionsCondition(mutate func(*druidv1alpha1.EtcdStatus)) func(*druidv1alpha1.EtcdStatus) {
	return func(st *druidv1alpha1.EtcdStatus) {
		mutate(st)
		now := r.clock.Now()
		if len(r.missing.components) > 0 {
			st.Conditions = health.SetCondition(st.Conditions, druidv1alpha1.Condition{Type: ConditionTypeComponentPermissionsMissing,
				Status: druidv1alpha1.ConditionTrue, Reason: ReasonPermissionsMissing, Message: r.missing.message()}, now)
			return
		}
		if slices.ContainsFunc(st.Conditions, func(c druidv1alpha1.Condition) bool { return c.Type == ConditionTypeComponentPermissionsMissing }) {
			st.Conditions = health.SetCondition(st.Conditions, druidv1alpha1.Condition{Type: ConditionTypeComponentPermissionsMissing,
				Status: druidv1alpha1.ConditionFalse, Reason: ReasonPermissionsGranted, Message: "druid's role allows every component"}, now)
		}
	}
}
