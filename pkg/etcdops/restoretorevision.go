package etcdops

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
)

// PointInTimeRestore asks for a new Etcd that starts from an existing one's backups at a point in time.
type PointInTimeRestore struct {
	// Name is the new Etcd's name, in the existing one's namespace.
	Name string
	// Prefix is the new Etcd's own spec.backup.store.prefix, where it backs up from then on; it must differ
	// from the existing one's, whose backups stay as they are.
	Prefix string
	// Revision or Time (RFC3339) is the point; exactly one.
	Revision int64
	Time     string
}

// NewEtcdForRestore builds the new Etcd: the existing one's spec with Prefix as its own store prefix, and
// the restore source annotations naming the existing one's prefix and the point (druidv1alpha1
// .RestoreSourcePrefixAnnotation). Its first member then restores from those backups, exact to the
// revision, and the source is never written to. The object is checked as the validation webhook checks
// it, so that a refusal names the field even where no webhook runs.
func NewEtcdForRestore(from *druidv1alpha1.Etcd, r PointInTimeRestore) (*druidv1alpha1.Etcd, error) {
	if r.Name == "" {
		return nil, errors.New("--name of the new Etcd is required")
	}
	if r.Name == from.Name {
		return nil, fmt.Errorf("--name %s is the existing Etcd: the restore goes into a NEW Etcd", r.Name)
	}
	if r.Prefix == "" {
		return nil, errors.New("--prefix, the new Etcd's own spec.backup.store.prefix, is required")
	}
	if (r.Revision == 0) == (r.Time == "") {
		return nil, errors.New("give exactly one of --revision and --time")
	}
	store := from.Spec.Backup.Store
	if store == nil {
		return nil, fmt.Errorf("the Etcd %s has no spec.backup.store: there are no backups to restore from", from.Name)
	}
	annotations := map[string]string{druidv1alpha1.RestoreSourcePrefixAnnotation: store.Prefix}
	if r.Revision != 0 {
		annotations[druidv1alpha1.RestoreSourceRevisionAnnotation] = strconv.FormatInt(r.Revision, 10)
	} else {
		annotations[druidv1alpha1.RestoreSourceTimeAnnotation] = r.Time
	}
	etcd := &druidv1alpha1.Etcd{
		TypeMeta:   metav1.TypeMeta{APIVersion: druidv1alpha1.SchemeGroupVersion.String(), Kind: "Etcd"},
		ObjectMeta: metav1.ObjectMeta{Namespace: from.Namespace, Name: r.Name, Labels: from.Labels, Annotations: annotations},
		Spec:       *from.Spec.DeepCopy(),
	}
	etcd.Spec.Backup.Store.Prefix = r.Prefix
	if errs := validation.ValidateEtcd(etcd); len(errs) > 0 {
		return nil, fmt.Errorf("the new Etcd would be refused: %w", errs.ToAggregate())
	}
	return etcd, nil
}

// RestoreToRevision reads the existing Etcd, builds the new one (NewEtcdForRestore) and, unless dryRun,
// creates it. It changes nothing else: the existing Etcd, its pods and its backups stay as they are.
func RestoreToRevision(ctx context.Context, c client.Client, from types.NamespacedName, r PointInTimeRestore, dryRun bool) (*druidv1alpha1.Etcd, error) {
	existing, err := GetEtcd(ctx, c, from)
	if err != nil {
		return nil, err
	}
	etcd, err := NewEtcdForRestore(existing, r)
	if err != nil || dryRun {
		return etcd, err
	}
	if err := c.Create(ctx, etcd); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("an Etcd %s already exists in %s: choose another --name", r.Name, from.Namespace)
		}
		return nil, fmt.Errorf("creating Etcd %s in %s: %w", r.Name, from.Namespace, err)
	}
	return etcd, nil
}
