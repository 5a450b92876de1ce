package app

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdops"
)

func newEtcdListCommand(o *etcdOptions) *cobra.Command {
	var allNamespaces bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the Etcds with replicas, the Ready condition, the last snapshots, suspension and protection",
		Args:  cobra.NoArgs,
	}
	format := outputFlag(cmd)
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "list the Etcds of every namespace")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*format); err != nil {
			return err
		}
		c, namespace, err := o.connect()
		if err != nil {
			return err
		}
		if allNamespaces {
			namespace = ""
		}
		summaries, err := etcdops.List(o.context(cmd), c, namespace)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if *format != outputTable {
			if summaries == nil {
				summaries = []etcdops.Summary{}
			}
			return printStructured(out, *format, summaries)
		}
		return printSummaries(out, summaries, namespace, time.Now())
	}
	return cmd
}

// printSummaries writes the list table; an empty namespace means every namespace and adds a NAMESPACE
// column first, as kubectl does with -A.
func printSummaries(out io.Writer, summaries []etcdops.Summary, namespace string, now time.Time) error {
	if len(summaries) == 0 {
		if namespace == "" {
			_, err := fmt.Fprintln(out, "No Etcds in any namespace.")
			return err
		}
		_, err := fmt.Fprintf(out, "No Etcds in namespace %s.\n", namespace)
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	prefix := func(etcdops.Summary) string { return "" }
	header := "NAME\tREPLICAS\tREADY\tREASON\tLAST FULL SNAPSHOT\tLAST DELTA SNAPSHOT\tSUSPENDED\tPROTECTED"
	if namespace == "" {
		header = "NAMESPACE\t" + header
		prefix = func(s etcdops.Summary) string { return s.Namespace + "\t" }
	}
	fmt.Fprintln(w, header)
	for _, s := range summaries {
		ready, reason := "-", "-"
		if s.Ready != nil {
			ready, reason = string(s.Ready.Status), orDash(s.Ready.Reason)
		}
		fmt.Fprintf(w, "%s%s\t%d/%d\t%s\t%s\t%s\t%s\t%t\t%t\n", prefix(s), s.Name, s.ReadyReplicas, s.Replicas, ready, reason,
			snapshotCell(s.LastFullSnapshot, now), snapshotCell(s.LastDeltaSnapshot, now),
			s.SpecReconcileSuspended != nil, s.ComponentProtectionDisabled == nil)
	}
	return w.Flush()
}

// snapshotCell is "<revision> (<age> ago)", or "-" when no lease records a snapshot.
func snapshotCell(s *etcdops.Snapshot, now time.Time) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%d (%s ago)", s.Revision, age(s.Time.Time, now))
}

func newEtcdMembersCommand(o *etcdOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "members NAME",
		Short: "Show the members of an Etcd as druid records them in its status (name, id, role, status, reason)",
		Args:  cobra.ExactArgs(1),
	}
	format := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*format); err != nil {
			return err
		}
		c, key, err := o.etcdKey(args)
		if err != nil {
			return err
		}
		etcd, err := etcdops.GetEtcd(o.context(cmd), c, key)
		if err != nil {
			return err
		}
		members := etcd.Status.Members
		out := cmd.OutOrStdout()
		if *format != outputTable {
			if members == nil {
				members = []druidv1alpha1.EtcdMemberStatus{}
			}
			return printStructured(out, *format, members)
		}
		return printMembers(out, etcd, time.Now())
	}
	return cmd
}

// printMembers writes status.members. It has no revision column: druid records no member's revision in the
// Etcd's status or the member leases, and this command reads nothing but the apiserver.
func printMembers(out io.Writer, etcd *druidv1alpha1.Etcd, now time.Time) error {
	if len(etcd.Status.Members) == 0 {
		_, err := fmt.Fprintf(out, "No members in the status of Etcd %s in namespace %s (druid has not recorded any).\n", etcd.Name, etcd.Namespace)
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tID\tROLE\tSTATUS\tREASON\tSINCE")
	for _, m := range etcd.Status.Members {
		id, role := "-", "-"
		if m.ID != nil {
			id = orDash(*m.ID)
		}
		if m.Role != nil {
			role = orDash(string(*m.Role))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, id, role, orDash(string(m.Status)), orDash(m.Reason), age(m.LastTransitionTime.Time, now))
	}
	return w.Flush()
}
