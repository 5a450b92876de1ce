package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
	s3provider "github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/s3"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Credential rotation, the way Gardener does it on a seed whose backup credentials change: a new key pair
// is issued on the store (a new user of the seed's versitygw, its IAM), gardenlet relays it into the
// BackupEntry's secret and has the entry reconciled, the backup extension rewrites the shoot's etcd-backup
// secret (same name, new content), the kubelet updates the members' mounted copy — and the old key pair is
// revoked on the store. The sidecars read the keys from the mounted secret, so nothing restarts.

// rotationFault is the table's name of a rotation.
const rotationFault = "credential rotation"

// s3UserName is the access key of the run's n-th key pair; the shoot starts on chaos-key-0 (never on the
// store's root keys, which cannot be revoked).
func s3UserName(n int) string { return fmt.Sprintf("chaos-key-%d", n) }

// useNewS3User issues the next key pair on the store and relays it to the shoot; it returns the old
// user (still valid).
func (s *Suite) useNewS3User(ctx context.Context) (old string, err error) {
	admin, err := s.Seed.S3Users()
	if err != nil {
		return "", err
	}
	secret := make([]byte, 20)
	if _, err := rand.Read(secret); err != nil {
		return "", err
	}
	user := s3UserName(s.rotations)
	if err := admin.CreateUser(ctx, user, hex.EncodeToString(secret)); err != nil {
		return "", fmt.Errorf("creating S3 user %s: %w", user, err)
	}
	if err := s.relayCredentials(ctx, user, hex.EncodeToString(secret)); err != nil {
		return "", err
	}
	old, s.s3User = s.s3User, user
	s.rotations++
	return old, nil
}

// relayCredentials does what gardenlet does: the new key pair into the BackupEntry's secret in the garden
// namespace, a reconcile of the entry requested; it returns once the extension wrote the keys into the
// shoot's etcd-backup secret.
func (s *Suite) relayCredentials(ctx context.Context, accessKey, secretKey string) error {
	c := s.Env.Client
	entrySecret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: seedworkflow.GardenNamespace, Name: backupentry.EntrySecretName(s.Env.BackupEntryName)}, entrySecret); err != nil {
		return fmt.Errorf("reading the BackupEntry's secret: %w", err)
	}
	patch := client.MergeFrom(entrySecret.DeepCopy())
	entrySecret.Data[s3provider.DataKeyAccessKeyID] = []byte(accessKey)
	entrySecret.Data[s3provider.DataKeySecretAccessKey] = []byte(secretKey)
	if err := c.Patch(ctx, entrySecret, patch); err != nil {
		return fmt.Errorf("writing the BackupEntry's secret: %w", err)
	}
	entry := &extensionsv1alpha1.BackupEntry{}
	if err := c.Get(ctx, client.ObjectKey{Name: s.Env.BackupEntryName}, entry); err != nil {
		return err
	}
	if entry.Status.EtcdBackupSecretRef == nil {
		return fmt.Errorf("BackupEntry %s names no etcd backup secret", entry.Name)
	}
	annotate := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+druidv1alpha1.GardenerOperationAnnotation+`":"reconcile"}}}`))
	if err := c.Patch(ctx, entry, annotate); err != nil {
		return fmt.Errorf("requesting a reconcile of BackupEntry %s: %w", entry.Name, err)
	}
	ref := entry.Status.EtcdBackupSecretRef
	return poll(ctx, "the new access key in the shoot's "+ref.Name+" secret", waitTimeout, func(ctx context.Context) (string, error) {
		shootSecret := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, shootSecret); err != nil {
			return "", err
		}
		if got := string(shootSecret.Data[s3provider.DataKeyAccessKeyID]); got != accessKey {
			return "access key " + got, nil
		}
		return "", nil
	})
}

// RotateCredentials rotates the backup credentials between rounds (after round after) on the settled
// cluster and checks what must hold: the new keys in the shoot's secret, the old user revoked, a snapshot
// holding the revision reached after the revocation stored (so with the new keys), BackupReady, an
// on-demand full snapshot succeeding, no pod recreated or container restarted, no acknowledged write lost.
// It is a line of the table of its own. The rotation counts as a disturbance for the compaction Jobs
// around it: a Job that started with the old keys may fail once they are revoked (druid runs another).
func (s *Suite) RotateCredentials(ctx context.Context, after int) Result {
	res := Result{Round: after, Fault: rotationFault, Between: true}
	if err := poll(ctx, "the cluster and druid settled before the rotation", waitTimeout, s.settled); err != nil {
		res.Err, res.Unready = err, true
		return res
	}
	before, err := s.snapshotPods(ctx)
	if err != nil {
		res.Err = err
		return res
	}
	r := &Round{N: after, Suite: s, Start: time.Now()}
	s.windows.begin(r.Start)
	ackedBefore := s.Writer.AckedCount()
	res.Err = s.rotate(ctx, r, &res)
	res.Acked, res.TotalAcked, res.Lost, err = s.checkWrites(ctx, ackedBefore)
	res.Err = errors.Join(res.Err, err)
	if now, err := s.snapshotPods(ctx); err == nil {
		res.Recoveries = podChanges(before, now)
		if len(res.Recoveries) > 0 {
			res.Err = errors.Join(res.Err, fmt.Errorf("the rotation restarted something: %v", res.Recoveries))
		}
	}
	s.windows.end(time.Now())
	res.Compactions, err = s.compactions.collect()
	res.Err = errors.Join(res.Err, err)
	res.Notes = r.Notes
	return res
}

func (s *Suite) rotate(ctx context.Context, r *Round, res *Result) error {
	begin := time.Now()
	old, err := s.useNewS3User(ctx)
	res.Target = fmt.Sprintf("%s → %s", old, s.s3User)
	if err != nil {
		return fmt.Errorf("rotating: %w", err)
	}
	if old == "" {
		r.Note("the store's root keys cannot be revoked")
	} else {
		admin, err := s.Seed.S3Users()
		if err == nil {
			err = admin.DeleteUser(ctx, old)
		}
		if err != nil {
			return fmt.Errorf("revoking S3 user %s: %w", old, err)
		}
		r.Note("%s revoked", old)
	}
	res.FaultFor = time.Since(begin)

	rev, err := s.clusterRevision(ctx)
	if err != nil {
		return err
	}
	landed := time.Now()
	name, err := s.waitSnapshotBeyond(ctx, rev)
	res.ToReady = time.Since(landed)
	if err != nil {
		return fmt.Errorf("backups after the rotation: %w", err)
	}
	r.Note("%s stored with the new keys %s after the revocation", name, res.ToReady.Round(time.Second))
	if err := backupReadyAgain(ctx, r); err != nil {
		return err
	}
	task, err := s.settledOpsTask(ctx, druidv1alpha1.OnDemandSnapshotTypeFull)
	res.OpsTasks = append(res.OpsTasks, task)
	if err != nil {
		return err
	}
	if task.EndRevision < rev {
		return fmt.Errorf("the full snapshot after the rotation holds revision %d, below %d", task.EndRevision, rev)
	}
	return nil
}

// clusterRevision is etcd-main's current revision.
func (s *Suite) clusterRevision(ctx context.Context) (int64, error) {
	cli, err := seedworkflow.EtcdClient(ctx, s.Env, etcd.RoleMain)
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	resp, err := cli.Get(ctx, KeyPrefix, clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("reading etcd-main's revision: %w", err)
	}
	return resp.Header.Revision, nil
}

// waitSnapshotBeyond waits until the store holds a snapshot (full or delta) up to at least revision rev,
// reading the seed's S3 directory itself, and returns its name.
func (s *Suite) waitSnapshotBeyond(ctx context.Context, rev int64) (string, error) {
	var found string
	err := poll(ctx, fmt.Sprintf("a snapshot up to revision %d in the store", rev), waitTimeout, func(context.Context) (string, error) {
		var last int64
		err := filepath.WalkDir(s.Seed.S3().Dir, func(_ string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			snap, perr := snapshot.ParseName(d.Name())
			if perr != nil {
				return nil // not a snapshot (versitygw's metadata)
			}
			if snap.LastRevision > last {
				last = snap.LastRevision
			}
			if snap.LastRevision >= rev && found == "" {
				found = d.Name()
			}
			return nil
		})
		if err != nil {
			return "", err
		}
		if found == "" {
			return fmt.Sprintf("the newest snapshot holds revision %d", last), nil
		}
		return "", nil
	})
	return found, err
}
