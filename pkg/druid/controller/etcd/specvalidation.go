package etcd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/coreevents"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/etcdvalidation"
)

// SpecValid is druid's own condition (not part of the upstream API). A deployment may register no
// validation webhook for Etcds (gardenlet registers none), so the spec flow runs the webhook's checks itself
// before it changes anything: an Etcd the webhook would refuse is not applied. The condition is written
// False when a spec is refused and True when a later spec passes; an Etcd never refused does not carry it.
const (
	ConditionTypeSpecValid druidv1alpha1.ConditionType = "SpecValid"
	// ReasonInvalidSpec is the reason of SpecValid=False; the message names the generation and every field
	// with what is wrong (field.ErrorList).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonSpecPassed is the reason of SpecValid=True after a False.
	ReasonSpecPassed = "SpecPassedValidation"
	// EventReasonInvalidSpec is the Warning event when a generation is refused.
	EventReasonInvalidSpec = "InvalidSpec"
	// EventReasonSpecWarnings is the Normal event with the webhook's warnings, once per generation.
	EventReasonSpecWarnings = "SpecWarnings"
	// ErrorCodeInvalidSpec is recorded in status.lastErrors while the spec is refused.
	ErrorCodeInvalidSpec druidv1alpha1.ErrorCode = "ERR_INVALID_SPEC"
)

// AppliedSpecAnnotation on the StatefulSet holds the Etcd spec (as written, not defaulted) that druid last
// applied successfully. It is the "old object" of the update rules (immutable fields, ratcheting): the
// StatefulSet is guarded by the component protection webhook, which gardenlet does register, so only
// druid writes it — unlike an annotation on the Etcd, which whoever writes the spec could forge.
const AppliedSpecAnnotation = "druid.gardener.cloud/applied-etcd-spec"

// validateSpec refuses the run's spec when the validation webhook would refuse it (etcdvalidation.EtcdErrors):
// as on create when nothing runs yet, against the spec last applied (appliedEtcd) otherwise. A refused spec
// stops the flow before anything is synced (the status flow still runs); the refusal is written and
// announced once per generation, so the periodic reconcile that comes back to the unreconciled generation
// costs no write. The webhook's warnings go out as a Normal event once per generation and druid process.
func (s *specRun) validateSpec(ctx context.Context) flow.Result {
	sts, err := s.existingStatefulSet(ctx)
	if err != nil {
		return flow.Fail(err)
	}
	candidate := s.etcd.DeepCopy()
	candidate.Spec = *s.spec.DeepCopy()
	errs := etcdvalidation.EtcdErrors(candidate, appliedEtcd(ctx, candidate, sts))
	prev := druidv1alpha1.FindCondition(s.etcd.Status.Conditions, ConditionTypeSpecValid)
	now := s.r.clock.Now()
	if len(errs) == 0 {
		s.r.announceWarnings(candidate, s.generation)
		if prev != nil && prev.Status != druidv1alpha1.ConditionTrue {
			s.specValid = &druidv1alpha1.Condition{Type: ConditionTypeSpecValid, Status: druidv1alpha1.ConditionTrue, Reason: ReasonSpecPassed,
				Message: fmt.Sprintf("generation %d passed druid's validation", s.generation)}
		}
		return flow.Continue()
	}

	// The fields come first: the event's message is cut at 1024 bytes (coreevents.TruncatedNote).
	message := fmt.Sprintf("generation %d not applied (%s), nothing changed in the cluster: %s", s.generation, strings.Join(fieldsOf(errs), ", "), errs.ToAggregate().Error())
	reason := "spec refused by validation"
	if prev != nil && prev.Status == druidv1alpha1.ConditionFalse && prev.Message == message {
		return flow.Stop(reason) // reported before; the next spec change brings the next judgement
	}
	log.FromContext(ctx).Info("Spec refused by validation, nothing synced", "generation", s.generation, "errors", errs.ToAggregate().Error())
	s.r.recorder.Eventf(s.etcd, nil, "Warning", EventReasonInvalidSpec, actionReconcile, "%s", coreevents.TruncatedNote(message))
	err = s.r.patchStatus(ctx, s.etcd, s.held, func(st *druidv1alpha1.EtcdStatus) {
		st.Conditions = health.SetCondition(st.Conditions, druidv1alpha1.Condition{Type: ConditionTypeSpecValid,
			Status: druidv1alpha1.ConditionFalse, Reason: ReasonInvalidSpec, Message: message}, now)
		st.LastErrors = []druidv1alpha1.LastError{{Code: ErrorCodeInvalidSpec, Description: message, ObservedAt: metav1.NewTime(now)}}
		op := s.op
		op.State, op.Description, op.LastUpdateTime = druidv1alpha1.LastOperationStateError, message, metav1.NewTime(now)
		st.LastOperation = &op
	})
	if err != nil {
		return flow.Fail(err)
	}
	return flow.Stop(reason)
}

// fieldsOf lists the fields errs name, each once, in order.
func fieldsOf(errs field.ErrorList) []string {
	var fields []string
	seen := map[string]bool{}
	for _, e := range errs {
		if !seen[e.Field] {
			seen[e.Field] = true
			fields = append(fields, e.Field)
		}
	}
	return fields
}

// appliedEtcd is etcd with the spec druid last applied, the old object of the update rules, or nil when
// nothing runs (no StatefulSet): the spec is then judged as on create. Without AppliedSpecAnnotation (a
// StatefulSet of an upstream etcd-druid, or of a druid before the annotation) druid cannot know the spec
// that was applied: what runs counts as applied, except the fields the StatefulSet shows — its claim
// template's name and storage class — which are taken from it.
func appliedEtcd(ctx context.Context, etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet) *druidv1alpha1.Etcd {
	if sts == nil {
		return nil
	}
	old := etcd.DeepCopy()
	if recorded, ok := sts.Annotations[AppliedSpecAnnotation]; ok {
		spec := druidv1alpha1.EtcdSpec{}
		err := json.Unmarshal([]byte(recorded), &spec)
		if err == nil {
			old.Spec = spec
			return old
		}
		log.FromContext(ctx).Info("Unreadable applied spec on the StatefulSet, judging against what it runs", "annotation", AppliedSpecAnnotation, "error", err.Error())
	}
	if len(sts.Spec.VolumeClaimTemplates) == 1 {
		claim := sts.Spec.VolumeClaimTemplates[0]
		if claim.Name != druidv1alpha1.VolumeClaimTemplateName(etcd) {
			old.Spec.VolumeClaimTemplate = ptr.To(claim.Name)
		}
		// An empty storage class leaves the claim's class unset (see the StatefulSet's claim template).
		if ptr.Deref(claim.Spec.StorageClassName, "") != ptr.Deref(etcd.Spec.StorageClass, "") {
			old.Spec.StorageClass = claim.Spec.StorageClassName
		}
	}
	return old
}

// recordAppliedSpec writes the run's spec onto the StatefulSet the sync left (AppliedSpecAnnotation), when
// it differs from what is recorded: the next spec is judged against it.
func (s *specRun) recordAppliedSpec(ctx context.Context) flow.Result {
	sts := s.synced.StatefulSet
	if sts == nil {
		return flow.Continue()
	}
	data, err := s.appliedSpec()
	if err != nil {
		return flow.Fail(err)
	}
	if sts.Annotations[AppliedSpecAnnotation] == data {
		return flow.Continue()
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{AppliedSpecAnnotation: data}}})
	if err != nil {
		return flow.Fail(err)
	}
	updated := sts.DeepCopy()
	if err := s.r.client.Patch(ctx, updated, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return flow.Fail(fmt.Errorf("recording the applied spec on statefulset %s: %w", sts.Name, err))
	}
	s.synced.StatefulSet = updated
	return flow.Continue()
}

// appliedSpec is the run's spec as AppliedSpecAnnotation records it.
func (s *specRun) appliedSpec() (string, error) {
	data, err := json.Marshal(s.spec)
	if err != nil {
		return "", fmt.Errorf("encoding the applied spec: %w", err)
	}
	return string(data), nil
}

// announceWarnings records the webhook's warnings for etcd's generation as one Normal event, once per
// generation and druid process (a restarted druid repeats them once).
func (r *Reconciler) announceWarnings(etcd *druidv1alpha1.Etcd, generation int64) {
	warnings := etcdvalidation.EtcdWarnings(etcd)
	if len(warnings) == 0 {
		return
	}
	if last, ok := r.warned.Load(etcd.UID); ok && last.(int64) == generation {
		return
	}
	r.warned.Store(etcd.UID, generation)
	r.recorder.Eventf(etcd, nil, "Normal", EventReasonSpecWarnings, actionReconcile, "%s",
		coreevents.TruncatedNote(fmt.Sprintf("generation %d: %s", generation, strings.Join(warnings, "; "))))
}
