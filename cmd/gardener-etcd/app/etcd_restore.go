package app

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdops"
)

func newEtcdRestoreToRevisionCommand(o *etcdOptions) *cobra.Command {
	var (
		r      etcdops.PointInTimeRestore
		dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "restore-to-revision NAME --name NEW --prefix PREFIX (--revision R | --time T) [--issue-certificates]",
		Short: "Create a NEW Etcd that starts from NAME's backups at a revision (or time) and backs up under its own prefix",
		Long: `Creates a new Etcd in NAME's namespace with NAME's spec, PREFIX as its own spec.backup.store.prefix and the
restore source annotations: its first member restores NAME's backups up to revision R exactly (or the newest
snapshot at or before time T), takes a full snapshot into PREFIX, and the other members join it. NAME, its
pods, its secrets and its backups are not changed.

NAME's server certificates name NAME (NAME-local, NAME-client…, *.NAME-peer…); the new members check and
reach each other under NEW's names. --issue-certificates issues, for each server certificate secret NAME
references (client, sidecar and peer), a certificate for NEW's names from the same CA (found among the
namespace's Secrets with ca.crt and ca.key), as the Secret NEW-server-tls (NEW-peer-server-tls, …) owned by
NEW, and points NEW at them; client certificates and CA bundles stay. Private keys are never printed: the
Secrets of --dry-run and -o are shown with their certificates only.`,
		Args: cobra.ExactArgs(1),
	}
	format := outputFlag(cmd)
	f := cmd.Flags()
	f.StringVar(&r.Name, "name", "", "name of the new Etcd")
	f.StringVar(&r.Prefix, "prefix", "", "the new Etcd's own spec.backup.store.prefix (not NAME's)")
	f.Int64Var(&r.Revision, "revision", 0, "restore exactly up to this revision, e.g. the one before a bad write's mod_revision")
	f.StringVar(&r.Time, "time", "", "restore up to the newest snapshot taken at or before this RFC3339 time")
	f.BoolVar(&r.IssueCertificates, "issue-certificates", false, "issue server and peer certificates for the new Etcd's names from the CAs that signed NAME's, as new Secrets it references")
	f.BoolVar(&dryRun, "dry-run", false, "print the new Etcd (and the Secrets it would get, without private keys) without creating anything")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*format); err != nil {
			return err
		}
		c, key, err := o.etcdKey(args)
		if err != nil {
			return err
		}
		restored, err := etcdops.RestoreToRevision(o.context(cmd), c, key, r, dryRun)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if *format != outputTable {
			return printStructured(out, *format, restoredObjects(restored))
		}
		return printRestored(out, key.Name, r, restored, dryRun)
	}
	return cmd
}

// restoredObjects is what -o prints: the Etcd alone, or with issued certificates a List of the Secrets
// (certificates only, see etcdops.WithoutPrivateKeys) and the Etcd, in the order they are created.
func restoredObjects(restored *etcdops.RestoredEtcd) any {
	if len(restored.Certificates) == 0 {
		return restored.Etcd
	}
	list := &corev1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	for _, cert := range restored.Certificates {
		list.Items = append(list.Items, runtime.RawExtension{Object: etcdops.WithoutPrivateKeys(cert.Secret)})
	}
	list.Items = append(list.Items, runtime.RawExtension{Object: restored.Etcd})
	return list
}

func printRestored(out io.Writer, source string, r etcdops.PointInTimeRestore, restored *etcdops.RestoredEtcd, dryRun bool) error {
	etcd := restored.Etcd
	verb := "Created"
	if dryRun {
		verb = "Would create"
	}
	point := fmt.Sprintf("revision %d", r.Revision)
	if r.Time != "" {
		point = "time " + r.Time
	}
	if _, err := fmt.Fprintf(out, "%s Etcd %s in %s: it restores %s's backups (prefix %s) up to %s and backs up under %s.\n",
		verb, etcd.Name, etcd.Namespace, source, etcd.Annotations[druidv1alpha1.RestoreSourcePrefixAnnotation], point, etcd.Spec.Backup.Store.Prefix); err != nil {
		return err
	}
	for _, cert := range restored.Certificates {
		if _, err := fmt.Fprintf(out, "%s Secret %s for %s: re-issued from %s, signed by the CA of %s, for %s; valid until %s, not renewed by anything: issue it again before then or after a CA rotation.\n",
			verb, cert.Secret.Name, strings.Join(cert.Fields, ", "), cert.From, cert.CASecret, strings.Join(cert.DNSNames, ", "),
			cert.NotAfter.UTC().Format(time.RFC3339)); err != nil {
			return err
		}
	}
	return nil
}
