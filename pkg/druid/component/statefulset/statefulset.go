// Package statefulset manages the StatefulSet `<n>` that runs the etcd members: per pod an `etcd`
// container (the etcd wrapper) and a `backup-restore` container (`etcdbrctl server`), a data PVC, and the
// TLS, configuration and backup volumes. It also holds back scale-ups until peer TLS is active on every
// existing member (a member without it could not talk to the new ones), and scale-ins until the members
// they drop have left the etcd membership (scalein.go).
package statefulset

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

const kind = component.KindStatefulSet

// PodTemplateChecksumAnnotation on the StatefulSet records the checksum of the pod template druid last
// rendered, so that an unchanged spec never patches (and never rolls) the pods.
const PodTemplateChecksumAnnotation = "druid.gardener.cloud/pod-template-checksum"

type operator struct {
	client      component.Clients
	images      config.Images
	localBackup config.LocalBackup
}

// New returns the StatefulSet operator with the images of druid's configuration and the node directories a
// Local backup store may mount.
func New(c component.Clients, images config.Images, localBackup config.LocalBackup) component.Operator {
	return &operator{client: c, images: images, localBackup: localBackup}
}

func emptyStatefulSet(etcd *druidv1alpha1.Etcd) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.StatefulSetName(etcd), Namespace: etcd.Namespace}}
}

// PlannedSyncer is the part of the StatefulSet operator the spec flow syncs through: the flow's
// rolling-update gate has rendered the pod template already, and the status flow that follows wants the
// StatefulSet as written (the cache often has not seen the write yet).
type PlannedSyncer interface {
	// SyncPlanned is Sync with the pod template rendered (nil: render it here). A rendering is taken only
	// for the very Etcd object it was rendered from; for any other it renders anew. onCreate are
	// annotations the StatefulSet gets when this sync creates it, so that what the caller would record on
	// a new StatefulSet right after (the applied spec, the cluster size) costs no patch of its own; an
	// existing StatefulSet never gets them here. The returned Synced is filled as far as the sync got,
	// also when it returns a component.RequeueError.
	SyncPlanned(ctx context.Context, etcd *druidv1alpha1.Etcd, rendered *Rendered, onCreate map[string]string) (Synced, error)
}

var _ PlannedSyncer = &operator{}

// Sync creates or patches the StatefulSet with a pod template rendered here (see SyncPlanned).
func (o *operator) Sync(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	_, err := o.SyncPlanned(ctx, etcd, nil, nil)
	return err
}

// SyncPlanned creates or patches the StatefulSet with rendered as its pod template. During a scale-up with
// peer TLS that is not active on every existing member yet, it patches the template at the current replica
// count and returns a component.RequeueError (see DecideReplicas).
func (o *operator) SyncPlanned(ctx context.Context, etcd *druidv1alpha1.Etcd, rendered *Rendered, onCreate map[string]string) (Synced, error) {
	var synced Synced
	err := o.syncPlanned(ctx, etcd, rendered, onCreate, &synced)
	return synced, err
}

func (o *operator) syncPlanned(ctx context.Context, etcd *druidv1alpha1.Etcd, desired *Rendered, onCreate map[string]string, synced *Synced) error {
	logger := log.FromContext(ctx).WithValues("etcd", client.ObjectKeyFromObject(etcd))
	if desired == nil || desired.etcd != etcd {
		var err error
		if desired, err = Render(ctx, o.client, o.images, o.localBackup, etcd); err != nil {
			return err
		}
	}

	existing, err := component.ExistingStatefulSet(ctx, o.client, etcd)
	if err != nil {
		return component.WrapError(err, component.OperationSync, kind, "reading statefulset %s", druidv1alpha1.StatefulSetName(etcd))
	}
	if existing != nil && existing.DeletionTimestamp != nil {
		logger.Info("StatefulSet is being deleted, waiting to create it again", "finalizers", existing.Finalizers)
		return component.Requeue(adoptionPollPeriod, "waiting for StatefulSet %s to be deleted (its pods orphaned) before creating it again", existing.Name)
	}

	var decision ReplicaDecision
	sts, result, err := component.CreateOrPatch(ctx, o.client, func() *appsv1.StatefulSet { return emptyStatefulSet(etcd) }, func(sts *appsv1.StatefulSet) error {
		in, err := o.replicaInput(ctx, etcd, sts)
		if err != nil {
			return err
		}
		carried, err := o.carriedLabels(ctx, etcd, sts, desired.Checksum)
		if err != nil {
			return err
		}
		template := withClaimName(withLabels(desired.template, carried), etcd, sts)
		if err := checkSelects(sts, template); err != nil {
			return err
		}
		decision = DecideReplicas(in)
		if sts.CreationTimestamp.IsZero() {
			for key, value := range onCreate {
				metav1.SetMetaDataAnnotation(&sts.ObjectMeta, key, value)
			}
		}
		mutate(sts, etcd, template, desired.Checksum, decision.Replicas)
		return nil
	})
	if err != nil {
		return component.WrapError(err, component.OperationSync, kind, "syncing statefulset %s", sts.Name)
	}
	logger.V(1).Info("Synced statefulset", "replicas", decision.Replicas, "result", result)
	synced.StatefulSet = sts
	events, err := o.expandVolumes(ctx, etcd, sts)
	synced.Events = append(synced.Events, events...)
	if err != nil {
		return err
	}
	recreate, kept := immutableDiffs(sts, etcd)
	if reason := claimTemplateRecreation(sts, etcd); reason != "" && len(recreate) == 0 && len(kept) == 0 {
		recreate = append(recreate, reason)
	}
	for _, k := range kept {
		logger.Info("Adoption: StatefulSet keeps an immutable field", "field", k)
	}
	synced.Notices = append(synced.Notices, kept...)
	if decision.Requeue && decision.ScaleIn {
		logger.Info("Scale-in held back", "reason", decision.Reason, "replicas", decision.Replicas, "desiredReplicas", etcd.Spec.Replicas)
		return component.RequeueWithEvent(scaleInPollPeriod, EventReasonScaleInHeldBack, "%s", decision.Reason)
	}
	if decision.Requeue {
		logger.Info("Scale-up held back", "reason", decision.Reason, "replicas", decision.Replicas, "desiredReplicas", etcd.Spec.Replicas)
		return component.Requeue(component.DefaultRequeueAfter, "%s", decision.Reason)
	}
	// Only when no scale is held back: the StatefulSet created again starts at spec.replicas.
	if len(recreate) > 0 {
		return o.recreate(ctx, etcd, sts, strings.Join(recreate, ", "))
	}
	return nil
}

// mutate writes the desired state into sts (fresh or as read from the apiserver). The update strategy is
// OnDelete, also on a StatefulSet an upstream druid wrote with RollingUpdate (its rollingUpdate, which the
// apiserver refuses beside OnDelete, goes): the StatefulSet controller then recreates deleted pods with the
// current template but deletes none, and druid's pod update (controller/etcd, package podupdate) chooses
// which member goes next by health and role instead of by ordinal. The strategy and the template go out in
// one write, so a template change never starts the StatefulSet controller's own rolling update. The immutable fields
// (selector, serviceName, podManagementPolicy, volumeClaimTemplates) are only set on creation: an existing
// StatefulSet, also one an upstream druid created, keeps its own, so that a patch never fails on them (the
// adoption recreates it where they must change, see immutableDiffs). The template is replaced only when
// the rendered template changed or someone changed a field druid sets, so that apiserver defaults never
// cause a patch.
func mutate(sts *appsv1.StatefulSet, etcd *druidv1alpha1.Etcd, template corev1.PodTemplateSpec, checksum string, replicas int32) {
	creating := sts.CreationTimestamp.IsZero()
	component.ApplyManagedMeta(sts, etcd, druidv1alpha1.ComponentStatefulSet)
	sts.Spec.Replicas = ptr.To(replicas)
	sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	if creating {
		sts.Spec.Selector = &metav1.LabelSelector{MatchLabels: druidv1alpha1.ManagedLabels(etcd)}
		sts.Spec.ServiceName = druidv1alpha1.PeerServiceName(etcd)
		sts.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
		sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{volumeClaimTemplate(etcd)}
	}
	if sts.Annotations[PodTemplateChecksumAnnotation] != checksum || !equality.Semantic.DeepDerivative(template, sts.Spec.Template) {
		sts.Spec.Template = template
		metav1.SetMetaDataAnnotation(&sts.ObjectMeta, PodTemplateChecksumAnnotation, checksum)
	}
}

// volumeClaimTemplate is the members' claim. An empty storageClass (what Gardener's provider extensions
// write for the cluster's default class) leaves the claim's class unset: on a PVC "" means "no class",
// which no provisioner serves.
func volumeClaimTemplate(etcd *druidv1alpha1.Etcd) corev1.PersistentVolumeClaim {
	storageClass := etcd.Spec.StorageClass
	if ptr.Deref(storageClass, "") == "" {
		storageClass = nil
	}
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.VolumeClaimTemplateName(etcd)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: storageClass,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: *etcd.Spec.StorageCapacity,
			}},
		},
	}
}

// replicaInput gathers what DecideReplicas needs; member leases are read only when a peer-TLS scale-up is
// actually pending.
func (o *operator) replicaInput(ctx context.Context, etcd *druidv1alpha1.Etcd, existing *appsv1.StatefulSet) (ReplicaInput, error) {
	in := ReplicaInput{
		Exists:        !existing.CreationTimestamp.IsZero(),
		Desired:       etcd.Spec.Replicas,
		PeerTLSInSpec: etcd.Spec.Etcd.PeerUrlTLS != nil,
	}
	if !in.Exists {
		return in, nil
	}
	in.Current = ptr.Deref(existing.Spec.Replicas, 1)
	in.PeerTLSVolumesUpToDate = PeerTLSVolumesUpToDate(existing.Spec.Template.Spec.Volumes, etcd)
	if in.Desired > 0 && in.Desired < in.Current {
		still, err := o.membersStillInCluster(ctx, etcd, in.Desired, in.Current)
		if err != nil {
			return in, err
		}
		in.MembersStillInCluster = still
	}
	if in.PeerTLSInSpec && in.Desired > in.Current && in.Current > 0 {
		enabled, err := o.allMembersPeerTLSEnabled(ctx, etcd, in.Current)
		if err != nil {
			return in, err
		}
		in.AllMembersPeerTLSEnabled = enabled
	}
	return in, nil
}

// allMembersPeerTLSEnabled reads the leases of the members below current; a missing lease counts as "not
// enabled yet", because that member's sidecar has not reported anything.
func (o *operator) allMembersPeerTLSEnabled(ctx context.Context, etcd *druidv1alpha1.Etcd, current int32) (bool, error) {
	for i := 0; i < int(current); i++ {
		lease := &coordinationv1.Lease{}
		err := o.client.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.MemberLeaseName(etcd, i)}, lease)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("reading member lease %s: %w", druidv1alpha1.MemberLeaseName(etcd, i), err)
		}
		if lease.Annotations[druidv1alpha1.TLSEnabledAnnotation] != "true" {
			return false, nil
		}
	}
	return true, nil
}

// TriggerDelete deletes the StatefulSet (its pods follow through the garbage collector; the PVCs stay).
func (o *operator) TriggerDelete(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	sts := emptyStatefulSet(etcd)
	return component.WrapError(component.DeleteIgnoringNotFound(ctx, o.client, sts),
		component.OperationDelete, kind, "deleting statefulset %s", sts.Name)
}

// GetExistingResourceNames returns the StatefulSet's name when it exists.
func (o *operator) GetExistingResourceNames(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error) {
	names, err := component.ExistingNames(ctx, o.client, emptyStatefulSet(etcd))
	return names, component.WrapError(err, component.OperationGet, kind, "getting statefulset")
}
