package app

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/defrag"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdops"
)

func newEtcdDefragmentCommand(o *etcdOptions) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "defragment NAME",
		Short: "Defragment every member of the Etcd once: followers first, the leader last after moving leadership",
		Args:  cobra.ExactArgs(1),
	}
	format := outputFlag(cmd)
	access := memberFlags(cmd)
	cmd.Flags().DurationVar(&timeout, "timeout", defrag.DefaultTimeout, "how long one member's defragmentation may take")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*format); err != nil {
			return err
		}
		ctx := o.context(cmd)
		cli, resolved, err := o.connectMembers(ctx, args, access)
		if err != nil {
			return err
		}
		defer cli.Close()
		res, runErr := etcdops.Defragment(ctx, cli, resolved, timeout, logr.Discard())
		out := cmd.OutOrStdout()
		if *format != outputTable {
			if err := printStructured(out, *format, res); err != nil {
				return err
			}
			return runErr
		}
		if len(res.Members) > 0 {
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "MEMBER\tID\tDB SIZE BEFORE\tDB SIZE AFTER")
			for _, m := range res.Members {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", m.Member, m.MemberID, bytesCell(m.DBSizeBefore), bytesCell(m.DBSizeAfter))
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if res.LeaderMovedTo != "" {
			fmt.Fprintf(out, "Leadership moved to member %s before the leader's turn.\n", res.LeaderMovedTo)
		}
		return runErr
	}
	return cmd
}

// bytesCell is a size as kubectl prints quantities (e.g. 12Mi), "-" when unknown.
func bytesCell(n int64) string {
	if n <= 0 {
		return "-"
	}
	return resource.NewQuantity(n, resource.BinarySI).String()
}
