package etcd

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
)

// LocalStoreMountsAllowed is druid's own condition (not part of the upstream API). A druid before the
// Local container check wrote StatefulSets whose backup volume mounts a node directory outside the allowed
// ones (container "../../var/lib/kubelet"); such a StatefulSet keeps running until druid rewrites it, which
// it does only once the Etcd's store passes the checks. The condition makes that state visible instead of
// silent. It is written when a mount is outside and stays (True) once it was.
const (
	ConditionTypeLocalStoreMountsAllowed druidv1alpha1.ConditionType = "LocalStoreMountsAllowed"
	// ReasonMountOutsideAllowedDirectories is the reason of False; the message names each volume and path.
	ReasonMountOutsideAllowedDirectories = "MountOutsideAllowedDirectories"
	// ReasonMountsAllowed is the reason of True after a False.
	ReasonMountsAllowed = "MountsAllowed"
	// EventReasonLocalStoreMountOutsideAllowed is the Warning event when the condition turns False.
	EventReasonLocalStoreMountOutsideAllowed = "LocalStoreMountOutsideAllowedDirectories"
)

// checkLocalStoreMounts reports the existing StatefulSet's mounts before anything is synced, so that the
// report stands also when the sync is refused (a store that still breaks the rules renders no template,
// and the StatefulSet is left as it is: druid deletes nothing there).
func (s *specRun) checkLocalStoreMounts(ctx context.Context) flow.Result {
	sts, err := s.existingStatefulSet(ctx)
	if err != nil {
		return flow.Fail(err)
	}
	return flowResultOf(s.recordLocalStoreMounts(ctx, sts))
}

// recheckLocalStoreMounts reports the StatefulSet the sync left: a rewritten template mounts only checked
// directories, so a False condition turns True here.
func (s *specRun) recheckLocalStoreMounts(ctx context.Context) flow.Result {
	return flowResultOf(s.recordLocalStoreMounts(ctx, s.synced.StatefulSet))
}

func (s *specRun) recordLocalStoreMounts(ctx context.Context, sts *appsv1.StatefulSet) error {
	if sts == nil {
		return nil
	}
	problems := storeaccess.MountedLocalDirProblems(&sts.Spec.Template.Spec, s.r.config.LocalBackup)
	prev := druidv1alpha1.FindCondition(s.etcd.Status.Conditions, ConditionTypeLocalStoreMountsAllowed)
	cond := druidv1alpha1.Condition{Type: ConditionTypeLocalStoreMountsAllowed, Status: druidv1alpha1.ConditionTrue, Reason: ReasonMountsAllowed,
		Message: "the StatefulSet mounts no node directory outside druid's allowed Local backup directories"}
	if len(problems) == 0 {
		if prev == nil || prev.Status == druidv1alpha1.ConditionTrue {
			return nil
		}
	} else {
		cond.Status, cond.Reason = druidv1alpha1.ConditionFalse, ReasonMountOutsideAllowedDirectories
		cond.Message = fmt.Sprintf("StatefulSet %s: %s; druid deletes nothing there and replaces the mount when it next syncs a spec.backup.store that passes its checks",
			sts.Name, strings.Join(problems, "; "))
		if prev == nil || prev.Status != druidv1alpha1.ConditionFalse || prev.Message != cond.Message {
			log.FromContext(ctx).Info("StatefulSet mounts a node directory outside the allowed Local backup directories", "problems", problems)
			s.r.recorder.Eventf(s.etcd, sts, "Warning", EventReasonLocalStoreMountOutsideAllowed, actionReconcile, "%s", cond.Message)
		}
	}
	return s.patchStatus(ctx, func(st *druidv1alpha1.EtcdStatus) {
		st.Conditions = health.SetCondition(st.Conditions, cond, s.r.clock.Now())
	})
}
