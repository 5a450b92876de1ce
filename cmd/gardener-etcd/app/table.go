package app

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// printEtcds prints the Etcds of the namespace with the conditions an operator checks first, the replica
// counts and every member's state, so the final output of a command answers "did it work".
func printEtcds(ctx context.Context, out io.Writer, c client.Client, namespace string) error {
	list := &druidv1alpha1.EtcdList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("listing the Etcds in %s: %w", namespace, err)
	}
	if len(list.Items) == 0 {
		fmt.Fprintf(out, "No Etcds in %s.\n", namespace)
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tREADY\tALL MEMBERS READY\tBACKUP READY\tREPLICAS\tMEMBERS")
	for i := range list.Items {
		e := &list.Items[i]
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d/%d\t%s\n", e.Name,
			conditionStatus(e, druidv1alpha1.ConditionTypeReady),
			conditionStatus(e, druidv1alpha1.ConditionTypeAllMembersReady),
			conditionStatus(e, druidv1alpha1.ConditionTypeBackupReady),
			e.Status.ReadyReplicas, e.Spec.Replicas, members(e))
	}
	return w.Flush()
}

func conditionStatus(e *druidv1alpha1.Etcd, t druidv1alpha1.ConditionType) string {
	for _, c := range e.Status.Conditions {
		if c.Type == t {
			return string(c.Status)
		}
	}
	return "-"
}

// members renders "name:status[:role]" per member, e.g. etcd-main-0:Ready:Leader.
func members(e *druidv1alpha1.Etcd) string {
	if len(e.Status.Members) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(e.Status.Members))
	for _, m := range e.Status.Members {
		s := m.Name + ":" + string(m.Status)
		if m.Role != nil {
			s += ":" + string(*m.Role)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}
