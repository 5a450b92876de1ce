package etcd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/secretref"
)

// errSecretsMissing stops the spec flow; the controller retries with back-off, and the Secret watch brings
// the Etcd back as soon as a referenced secret changes.
var errSecretsMissing = errors.New("referenced secrets are missing")

// specRun is the state of one spec reconcile. etcd is refreshed by every write's answer; target is the
// defaulted snapshot of the spec taken when the run started, and generation its generation. Components
// are synced from target and observedGeneration records generation, so that a spec change that arrives
// mid-run is not reported as reconciled (it triggers its own run).
type specRun struct {
	r      *Reconciler
	etcd   *druidv1alpha1.Etcd
	target *druidv1alpha1.Etcd
	// spec is the spec as written (not defaulted) when the run started: what validateSpec judges and
	// recordAppliedSpec records.
	spec       *druidv1alpha1.EtcdSpec
	generation int64
	op         druidv1alpha1.LastOperation
	// secretsPresent is set once checkSecrets found every referenced secret and key: the SecretsReady=True
	// condition then goes out with the run's next status write instead of costing a write of its own.
	secretsPresent bool
	// specValid is SpecValid=True once a spec passed after a refusal; it goes out with the run's next
	// status write.
	specValid *druidv1alpha1.Condition
	// rendered is target's pod template once renderPodTemplate rendered it (nil while no StatefulSet
	// exists); syncComponents passes it to the StatefulSet operator's SyncPlanned, so that a run renders
	// it once.
	rendered *statefulset.Rendered
	// held is the reconcile's status held for its next write: recordSuccess puts the run's success there,
	// and the status flow writes it with what it observed (finish writes it when the status flow did not).
	held *heldStatus
	// succeeded is set by recordSuccess: finish then removes the operation annotation.
	succeeded bool
	// synced is the StatefulSet as SyncPlanned returned it, for the status flow that follows.
	synced statefulset.Synced
}

// newSpecRun starts a spec run of etcd whose status writes go through held.
func (r *Reconciler) newSpecRun(etcd *druidv1alpha1.Etcd, held *heldStatus) *specRun {
	run := &specRun{r: r, etcd: etcd, target: druidv1alpha1.Defaulted(etcd), spec: etcd.Spec.DeepCopy(), generation: etcd.Generation, held: held, op: druidv1alpha1.LastOperation{
		Type:  druidv1alpha1.LastOperationTypeReconcile,
		RunID: string(uuid.NewUUID()),
	}}
	if etcd.Status.ObservedGeneration == nil {
		run.op.Type = druidv1alpha1.LastOperationTypeCreate
	}
	return run
}

// steps are the spec flow: adopt the objects of an upstream etcd-druid → hold during a quorum-loss
// recovery → refuse a spec the validation webhook would refuse → record operation → finalizer → secrets → report Local store mounts outside the allowed
// directories (before and after the sync) → render the pod template → full snapshot before hibernation or
// new images → components → record the applied spec → success (held for the status flow's write).
// The operation annotation is removed by finish, after the status flow wrote the success.
func (s *specRun) steps() []flow.Step {
	return []flow.Step{
		s.r.adoptStep(s.etcd),
		{Name: "holdDuringQuorumLossRecovery", Run: s.holdDuringQuorumLossRecovery},
		{Name: "validateSpec", Run: s.validateSpec},
		{Name: "recordOperationStart", Run: s.recordStart},
		{Name: "ensureFinalizer", Run: s.ensureFinalizer},
		{Name: "checkReferencedSecrets", Run: s.checkSecrets},
		{Name: "checkLocalStoreMounts", Run: s.checkLocalStoreMounts},
		{Name: "renderPodTemplate", Run: s.renderPodTemplate},
		{Name: "snapshotBeforeUpdate", Run: s.snapshotBeforeUpdate},
		{Name: "syncComponents", Run: s.syncComponents},
		{Name: "recordAppliedSpec", Run: s.recordAppliedSpec},
		{Name: "recheckLocalStoreMounts", Run: s.recheckLocalStoreMounts},
		{Name: "recordSuccess", Run: s.recordSuccess},
	}
}

// finish runs after the status flow of the same reconcile when the spec flow succeeded: it writes the held
// success if the status flow failed before writing it, then removes the operation annotation.
func (s *specRun) finish(ctx context.Context) flow.Result {
	return flow.Run(ctx, log.FromContext(ctx), []flow.Step{
		{Name: "writeHeldSuccess", Run: s.writeHeldSuccess},
		{Name: "removeOperationAnnotation", Run: s.removeOperationAnnotation},
	})
}

func (s *specRun) writeHeldSuccess(ctx context.Context) flow.Result {
	if !s.held.pending() {
		return flow.Continue()
	}
	return flowResultOf(s.r.patchStatus(ctx, s.etcd, s.held, func(*druidv1alpha1.EtcdStatus) {}))
}

func (s *specRun) record(ctx context.Context, state druidv1alpha1.LastOperationState, description string, lastErrors ...druidv1alpha1.LastError) error {
	op := s.op
	op.State, op.Description, op.LastUpdateTime = state, description, metav1.NewTime(s.r.clock.Now())
	return s.patchStatus(ctx, func(st *druidv1alpha1.EtcdStatus) {
		st.LastOperation = &op
		if op.State == druidv1alpha1.LastOperationStateError {
			st.LastErrors = lastErrors
		}
	})
}

// patchStatus writes the Etcd's status with mutate applied, and with SecretsReady=True once the secrets
// were found present.
func (s *specRun) patchStatus(ctx context.Context, mutate func(*druidv1alpha1.EtcdStatus)) error {
	return s.r.patchStatus(ctx, s.etcd, s.held, s.withSecretsReady(mutate))
}

// withSecretsReady is mutate that also sets SecretsReady=True once the secrets were found present, and
// SpecValid=True once a spec passed after a refusal.
func (s *specRun) withSecretsReady(mutate func(*druidv1alpha1.EtcdStatus)) func(*druidv1alpha1.EtcdStatus) {
	return func(st *druidv1alpha1.EtcdStatus) {
		if s.specValid != nil {
			st.Conditions = health.SetCondition(st.Conditions, *s.specValid, s.r.clock.Now())
		}
		if s.secretsPresent {
			if c := druidv1alpha1.FindCondition(st.Conditions, ConditionTypeSecretsReady); c == nil || c.Status != druidv1alpha1.ConditionTrue {
				st.Conditions = health.SetCondition(st.Conditions, druidv1alpha1.Condition{Type: ConditionTypeSecretsReady,
					Status: druidv1alpha1.ConditionTrue, Reason: ReasonAllSecretsPresent, Message: "every referenced secret exists with the keys the spec needs"}, s.r.clock.Now())
			}
		}
		mutate(st)
	}
}

// recordStart writes lastOperation Processing, the run's first write: it carries the cached
// resourceVersion, so a cache that lags behind someone else's write fails it with a conflict before
// anything is synced. A new Etcd's run skips it: ensureFinalizer writes the finalizer next with the same
// optimistic lock, and a creation normally has nothing to wait for (no member yet to snapshot or roll),
// so its first status write is its outcome, success, error or requeue, a moment later. Each skipped
// write is one status write less per new Etcd, a full decode, validation and encode of the object in the
// apiserver and a watch event to every druid replica.
func (s *specRun) recordStart(ctx context.Context) flow.Result {
	if s.op.Type == druidv1alpha1.LastOperationTypeCreate && !controllerutil.ContainsFinalizer(s.etcd, druidv1alpha1.FinalizerName) {
		return flow.Continue()
	}
	desc := fmt.Sprintf("%s of generation %d in progress", s.op.Type, s.generation)
	if err := s.record(ctx, druidv1alpha1.LastOperationStateProcessing, desc); err != nil {
		return flow.Fail(err)
	}
	return flow.Continue()
}

func (s *specRun) ensureFinalizer(ctx context.Context) flow.Result {
	if controllerutil.ContainsFinalizer(s.etcd, druidv1alpha1.FinalizerName) {
		return flow.Continue()
	}
	base := s.etcd.DeepCopy()
	controllerutil.AddFinalizer(s.etcd, druidv1alpha1.FinalizerName)
	if err := s.r.client.Patch(ctx, s.etcd, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return flow.Fail(fmt.Errorf("adding finalizer: %w", err))
	}
	s.r.own.record(s.etcd, s.r.clock.Now())
	return flow.Continue()
}

// checkSecrets stops the flow before any component is synced when a referenced secret or key is missing, or
// when a backup store without a secret could not work on the pod's own identity.
func (s *specRun) checkSecrets(ctx context.Context) flow.Result {
	missing, err := missingSecrets(ctx, s.r.secrets, secretref.Of(s.target))
	if err != nil {
		return flow.Fail(err)
	}
	missing = append(secretref.AmbientStoreProblems(s.target), missing...)
	now := s.r.clock.Now()
	if len(missing) == 0 {
		s.secretsPresent = true // written with the next status write of the run (recordSuccess at the latest)
		return flow.Continue()
	}

	message := strings.Join(missing, "; ")
	log.FromContext(ctx).Info("Referenced secrets missing, no component is synced", "missing", message)
	s.r.recorder.Eventf(s.etcd, nil, "Warning", EventReasonSecretsMissing, actionReconcile, "no component synced: %s", message)
	err = s.patchStatus(ctx, func(st *druidv1alpha1.EtcdStatus) {
		st.Conditions = health.SetCondition(st.Conditions, druidv1alpha1.Condition{Type: ConditionTypeSecretsReady,
			Status: druidv1alpha1.ConditionFalse, Reason: ReasonSecretsMissing, Message: message}, now)
		st.LastErrors = []druidv1alpha1.LastError{{Code: ErrorCodeSecretsMissing, Description: message, ObservedAt: metav1.NewTime(now)}}
		op := s.op
		op.State, op.Description, op.LastUpdateTime = druidv1alpha1.LastOperationStateError, "waiting for referenced secrets: "+message, metav1.NewTime(now)
		st.LastOperation = &op
	})
	if err != nil {
		return flow.Fail(err)
	}
	return flow.Fail(fmt.Errorf("%w: %s", errSecretsMissing, message))
}

// syncComponents syncs every component in registry order on a defaulted copy. A component's requeue (the
// peer-TLS scale-up gate, the scale-in gate) is not a failure: lastOperation says Requeue with the reason and the flow comes
// back after the requested delay.
func (s *specRun) syncComponents(ctx context.Context) flow.Result {
	s.r.reportSkipped(s.etcd)
	err := s.syncRegistry(ctx)
	for _, notice := range s.synced.Notices {
		s.r.recorder.Eventf(s.etcd, nil, "Warning", EventReasonStatefulSetFieldKept, actionReconcile, "StatefulSet %s: %s", druidv1alpha1.StatefulSetName(s.target), notice)
	}
	for _, e := range s.synced.Events {
		eventType := "Normal"
		if e.Warning {
			eventType = "Warning"
		}
		s.r.recorder.Eventf(s.etcd, nil, eventType, e.Reason, actionReconcile, "%s", e.Message)
	}
	if err == nil {
		return flow.Continue()
	}
	if requeue, ok := component.IsRequeue(err); ok {
		event := EventReasonScaleUpHeldBack
		if requeue.Event != "" {
			event = requeue.Event
		}
		s.r.recorder.Eventf(s.etcd, nil, "Normal", event, actionReconcile, "%s", requeue.Reason)
		if err := s.record(ctx, druidv1alpha1.LastOperationStateRequeue, requeue.Reason); err != nil {
			return flow.Fail(err)
		}
		return flow.RequeueAfter(requeue.After, requeue.Reason)
	}
	s.r.recorder.Eventf(s.etcd, nil, "Warning", EventReasonReconcileError, actionReconcile, "%v", err)
	if recordErr := s.record(ctx, druidv1alpha1.LastOperationStateError, err.Error(), component.AsLastError(err, s.r.clock.Now())); recordErr != nil {
		return flow.Fail(errors.Join(err, recordErr))
	}
	return flow.Fail(err)
}

// syncRegistry syncs every operator in registry order and stops at the first error or requeue (as
// component.Registry.SyncAll does); the StatefulSet goes through SyncPlanned with the gate's rendering,
// and what it wrote is kept in s.synced.
func (s *specRun) syncRegistry(ctx context.Context) error {
	onCreate, err := s.creationAnnotations()
	if err != nil {
		return err
	}
	for _, reg := range s.r.registry {
		if reg.Kind == component.KindStatefulSet {
			synced, err := s.r.registry.Get(reg.Kind).(statefulset.PlannedSyncer).SyncPlanned(ctx, s.target, s.rendered, onCreate)
			s.synced = synced
			if err != nil {
				return err
			}
			continue
		}
		if err := reg.Operator.Sync(ctx, s.target); err != nil {
			return err
		}
	}
	return nil
}

// creationAnnotations are what the run records on a StatefulSet it creates, written with the create
// instead of a patch each right after it: the applied spec (recordAppliedSpec), and for a new Etcd the
// cluster size the heal flow records (recordClusterSize). A new Etcd (no observedGeneration) has member
// leases no sidecar has renewed, so the size the heal flow would record is spec.replicas
// (health.NextClusterSize with no member run); a StatefulSet created again for an Etcd that ran gets its
// size from the heal flow, which derives it from the leases (health.RecordedClusterSize).
func (s *specRun) creationAnnotations() (map[string]string, error) {
	applied, err := s.appliedSpec()
	if err != nil {
		return nil, err
	}
	annotations := map[string]string{AppliedSpecAnnotation: applied}
	if s.op.Type == druidv1alpha1.LastOperationTypeCreate {
		maps.Copy(annotations, health.ClusterSizeMarker(&appsv1.StatefulSet{}, s.target.Spec.Replicas))
	}
	return annotations, nil
}

// recordSuccess holds the run's success (observedGeneration, lastOperation Succeeded, no lastErrors) for
// the status flow's write, which follows in the same reconcile: one status write carries both.
func (s *specRun) recordSuccess(context.Context) flow.Result {
	now := metav1.NewTime(s.r.clock.Now())
	s.held.hold(s.etcd, s.r.withPermissionsCondition(s.withSecretsReady(func(st *druidv1alpha1.EtcdStatus) {
		st.ObservedGeneration = &s.generation
		st.LastErrors = nil
		op := s.op
		op.State, op.Description, op.LastUpdateTime = druidv1alpha1.LastOperationStateSucceeded,
			fmt.Sprintf("%s of generation %d succeeded", s.op.Type, s.generation), now
		st.LastOperation = &op
	})))
	s.succeeded = true
	return flow.Continue()
}

// removeOperationAnnotation runs only after observedGeneration was written, so that whoever set the
// annotation can rely on its removal meaning "reconciled". When the spec changed during the run, the
// annotation stays: it asks for the newer spec, which this run did not apply. The optimistic lock keeps a
// concurrent change from being answered by this removal.
func (s *specRun) removeOperationAnnotation(ctx context.Context) flow.Result {
	if !HasReconcileAnnotation(s.etcd) {
		return flow.Continue()
	}
	if s.etcd.Generation != s.generation {
		log.FromContext(ctx).Info("Spec changed during the reconcile, keeping the operation annotation",
			"reconciledGeneration", s.generation, "generation", s.etcd.Generation)
		return flow.Continue()
	}
	base := s.etcd.DeepCopy()
	for _, key := range []string{druidv1alpha1.GardenerOperationAnnotation, druidv1alpha1.DruidOperationAnnotation} {
		if s.etcd.Annotations[key] == druidv1alpha1.OperationReconcile {
			delete(s.etcd.Annotations, key)
		}
	}
	if err := s.r.client.Patch(ctx, s.etcd, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return flow.Fail(fmt.Errorf("removing the operation annotation: %w", err))
	}
	s.r.own.record(s.etcd, s.r.clock.Now())
	return flow.Continue()
}
