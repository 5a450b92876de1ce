package etcdops

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	// IssueCertificates issues server (and peer) certificates for the new Etcd's names from the CAs that
	// signed the existing Etcd's, as new Secrets that the new Etcd references (issueServerCertificates).
	IssueCertificates bool
}

// RestoredEtcd is the new Etcd and the certificates issued for it.
type RestoredEtcd struct {
	Etcd *druidv1alpha1.Etcd
	// Certificates are the issued server certificates, with their Secrets (private keys included: print
	// them through WithoutPrivateKeys); empty unless PointInTimeRestore.IssueCertificates.
	Certificates []IssuedCertificate
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
	if err := retarget(etcd, from); err != nil {
		return nil, err
	}
	if errs := validation.ValidateEtcd(etcd); len(errs) > 0 {
		return nil, fmt.Errorf("the new Etcd would be refused: %w", errs.ToAggregate())
	}
	return etcd, nil
}

// RestoreToRevision reads the existing Etcd, builds the new one (NewEtcdForRestore), issues certificates
// for its names if asked and, unless dryRun, creates them. Everything is read and issued before anything is
// created, so a refusal (a missing CA key, a name taken) leaves the cluster as it was. It changes nothing
// else: the existing Etcd, its pods, secrets and backups stay as they are.
func RestoreToRevision(ctx context.Context, c client.Client, from types.NamespacedName, r PointInTimeRestore, dryRun bool) (*RestoredEtcd, error) {
	existing, err := GetEtcd(ctx, c, from)
	if err != nil {
		return nil, err
	}
	etcd, err := NewEtcdForRestore(existing, r)
	if err != nil {
		return nil, err
	}
	out := &RestoredEtcd{Etcd: etcd}
	if r.IssueCertificates {
		if out.Certificates, err = issueServerCertificates(ctx, c, existing.Name, etcd, time.Now()); err != nil {
			return nil, err
		}
	}
	if dryRun {
		return out, nil
	}
	if err := createRestored(ctx, c, out); err != nil {
		return nil, err
	}
	return out, nil
}

// createRestored creates the certificates' Secrets, then the Etcd (so that druid never sees it without its
// secrets), then makes the Etcd the Secrets' owner, so that deleting the Etcd deletes them (druid keeps its
// finalizer on them until the Etcd is gone). A failure before the Etcd exists deletes the Secrets created.
func createRestored(ctx context.Context, c client.Client, out *RestoredEtcd) error {
	etcd := out.Etcd
	switch err := c.Get(ctx, client.ObjectKeyFromObject(etcd), &druidv1alpha1.Etcd{}); {
	case err == nil:
		return fmt.Errorf("an Etcd %s already exists in %s: choose another --name", etcd.Name, etcd.Namespace)
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading Etcd %s in %s: %w", etcd.Name, etcd.Namespace, err)
	}
	var created []*corev1.Secret
	// undo deletes the Secrets created so far. It runs on a context of its own: an interrupted command
	// (Ctrl-C cancels ctx) must still clean up what it created.
	undo := func(cause error) error {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for _, s := range created {
			if err := c.Delete(cleanup, s); client.IgnoreNotFound(err) != nil {
				cause = errors.Join(cause, fmt.Errorf("deleting secret %s again: %w", s.Name, err))
			}
		}
		return cause
	}
	for _, cert := range out.Certificates {
		if err := c.Create(ctx, cert.Secret); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return undo(fmt.Errorf("a secret %s already exists in %s: delete it (a leftover of an earlier restore?) or choose another --name", cert.Secret.Name, etcd.Namespace))
			}
			return undo(fmt.Errorf("creating secret %s in %s: %w", cert.Secret.Name, etcd.Namespace, err))
		}
		created = append(created, cert.Secret)
	}
	if err := c.Create(ctx, etcd); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return undo(fmt.Errorf("an Etcd %s already exists in %s: choose another --name", etcd.Name, etcd.Namespace))
		}
		// The apiserver may have stored the Etcd although the answer was lost (a timeout): it then
		// references the Secrets, and deleting them would leave its members without certificates.
		switch stored, lookupErr := etcdStoredDespite(ctx, c, etcd); {
		case lookupErr != nil:
			return fmt.Errorf("creating Etcd %s in %s: %w; whether it was stored is unknown (%w): the secrets it would reference are kept", etcd.Name, etcd.Namespace, err, lookupErr)
		case stored:
			return fmt.Errorf("creating Etcd %s in %s answered %w, but the Etcd was stored: its secrets are kept; delete them with the Etcd", etcd.Name, etcd.Namespace, err)
		}
		return undo(fmt.Errorf("creating Etcd %s in %s: %w", etcd.Name, etcd.Namespace, err))
	}
	owner := metav1.OwnerReference{APIVersion: druidv1alpha1.SchemeGroupVersion.String(), Kind: "Etcd", Name: etcd.Name, UID: etcd.UID}
	for _, s := range created {
		patch := client.MergeFrom(s.DeepCopy())
		s.OwnerReferences = append(s.OwnerReferences, owner)
		if err := c.Patch(ctx, s, patch); err != nil {
			return fmt.Errorf("the Etcd %s was created, but making it the owner of secret %s failed (delete the secret with the Etcd): %w", etcd.Name, s.Name, err)
		}
	}
	return nil
}

// etcdStoredDespite tells whether an Etcd whose creation returned an error was stored all the same, read
// on a context of its own (the command's may be cancelled).
func etcdStoredDespite(ctx context.Context, c client.Client, etcd *druidv1alpha1.Etcd) (bool, error) {
	lookup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := c.Get(lookup, client.ObjectKeyFromObject(etcd), &druidv1alpha1.Etcd{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}
