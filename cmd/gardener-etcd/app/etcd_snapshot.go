package app

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdops"
)

// newEtcdSnapshotCommand asks druid for an on-demand snapshot through an EtcdOpsTask. There is no
// defragment command: upstream etcd-druid's EtcdOpsTask (v0.38.1, the API this project serves) has no
// defragmentation operation, only onDemandSnapshot.
func newEtcdSnapshotCommand(o *etcdOptions) *cobra.Command {
	var (
		full, delta, wait     bool
		timeout, pollInterval time.Duration
	)
	cmd := &cobra.Command{
		Use:   "snapshot NAME (--full | --delta)",
		Short: "Take an on-demand full or delta snapshot through an EtcdOpsTask and wait for druid's result",
		Args:  cobra.ExactArgs(1),
	}
	format := outputFlag(cmd)
	f := cmd.Flags()
	f.BoolVar(&full, "full", false, "take a full snapshot")
	f.BoolVar(&delta, "delta", false, "take a delta snapshot (the changes since the last snapshot)")
	f.BoolVar(&wait, "wait", true, "wait until druid finished the task and fail unless it succeeded")
	f.DurationVar(&timeout, "timeout", 0, "how long to wait (default: the snapshot's timeout plus 2m for druid to admit the task)")
	f.DurationVar(&pollInterval, "poll-interval", 2*time.Second, "how often to look while waiting")
	cmd.MarkFlagsMutuallyExclusive("full", "delta")
	cmd.MarkFlagsOneRequired("full", "delta")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*format); err != nil {
			return err
		}
		typ := druidv1alpha1.OnDemandSnapshotTypeFull
		if delta {
			typ = druidv1alpha1.OnDemandSnapshotTypeDelta
		}
		c, key, err := o.etcdKey(args)
		if err != nil {
			return err
		}
		ctx, out := o.context(cmd), cmd.OutOrStdout()
		// Progress goes to stderr with -o json|yaml, so that stdout parses.
		progress := out
		if *format != outputTable {
			progress = cmd.ErrOrStderr()
		}
		task, err := etcdops.CreateSnapshotTask(ctx, c, key, typ)
		if err != nil {
			return err
		}
		fmt.Fprintf(progress, "Created EtcdOpsTask %s: a %s snapshot of %s\n", task.Name, typ, etcdName(key))
		var waitErr error
		if wait {
			if timeout == 0 {
				timeout = etcdops.WaitTimeout(task)
			}
			fmt.Fprintf(progress, "Waiting up to %s for druid to finish it ...\n", timeout)
			task, waitErr = etcdops.WaitForTask(ctx, c, task, pollInterval, timeout)
		}
		if err := printTask(out, *format, task); err != nil {
			return errors.Join(waitErr, err)
		}
		if waitErr != nil || !wait {
			return waitErr
		}
		return etcdops.TaskResult(task)
	}
	return cmd
}

// printTask prints the task as a table row, or the whole object with -o json|yaml.
func printTask(out io.Writer, format string, task *druidv1alpha1.EtcdOpsTask) error {
	if format != outputTable {
		task = task.DeepCopy()
		gvk, err := apiutil.GVKForObject(task, scheme)
		if err != nil {
			return err
		}
		task.SetGroupVersionKind(gvk)
		return printStructured(out, format, task)
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tETCD\tTYPE\tSTATE\tOUTCOME")
	typ := "-"
	if s := task.Spec.Config.OnDemandSnapshot; s != nil {
		typ = string(s.Type)
	}
	etcd := "-"
	if task.Spec.EtcdName != nil {
		etcd = *task.Spec.EtcdName
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", task.Name, etcd, typ, etcdops.TaskState(task), orDash(etcdops.TaskOutcome(task)))
	return w.Flush()
}
