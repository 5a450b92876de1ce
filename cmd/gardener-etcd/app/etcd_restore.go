package app

import (
	"fmt"

	"github.com/spf13/cobra"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdops"
)

func newEtcdRestoreToRevisionCommand(o *etcdOptions) *cobra.Command {
	var (
		r      etcdops.PointInTimeRestore
		dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "restore-to-revision NAME --name NEW --prefix PREFIX (--revision R | --time T)",
		Short: "Create a NEW Etcd that starts from NAME's backups at a revision (or time) and backs up under its own prefix",
		Long: `Creates a new Etcd in NAME's namespace with NAME's spec, PREFIX as its own spec.backup.store.prefix and the
restore source annotations: its first member restores NAME's backups up to revision R exactly (or the newest
snapshot at or before time T), takes a full snapshot into PREFIX, and the other members join it. NAME, its
pods and its backups are not changed.`,
		Args: cobra.ExactArgs(1),
	}
	format := outputFlag(cmd)
	f := cmd.Flags()
	f.StringVar(&r.Name, "name", "", "name of the new Etcd")
	f.StringVar(&r.Prefix, "prefix", "", "the new Etcd's own spec.backup.store.prefix (not NAME's)")
	f.Int64Var(&r.Revision, "revision", 0, "restore exactly up to this revision, e.g. the one before a bad write's mod_revision")
	f.StringVar(&r.Time, "time", "", "restore up to the newest snapshot taken at or before this RFC3339 time")
	f.BoolVar(&dryRun, "dry-run", false, "print the new Etcd without creating it")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*format); err != nil {
			return err
		}
		c, key, err := o.etcdKey(args)
		if err != nil {
			return err
		}
		etcd, err := etcdops.RestoreToRevision(o.context(cmd), c, key, r, dryRun)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if *format != outputTable {
			return printStructured(out, *format, etcd)
		}
		verb := "Created"
		if dryRun {
			verb = "Would create"
		}
		point := fmt.Sprintf("revision %d", r.Revision)
		if r.Time != "" {
			point = "time " + r.Time
		}
		_, err = fmt.Fprintf(out, "%s Etcd %s in %s: it restores %s's backups (prefix %s) up to %s and backs up under %s.\n",
			verb, etcd.Name, etcd.Namespace, key.Name, etcd.Annotations[druidv1alpha1.RestoreSourcePrefixAnnotation], point, etcd.Spec.Backup.Store.Prefix)
		return err
	}
	return cmd
}
