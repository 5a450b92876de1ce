package app

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdops"
)

func newEtcdAlarmsCommand(o *etcdOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "alarms NAME",
		Short: "List the active etcd alarms (NOSPACE, CORRUPT) of the Etcd's members",
		Args:  cobra.ExactArgs(1),
	}
	format := outputFlag(cmd)
	access := memberFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*format); err != nil {
			return err
		}
		ctx := o.context(cmd)
		cli, _, err := o.connectMembers(ctx, args, access)
		if err != nil {
			return err
		}
		defer cli.Close()
		alarms, err := etcdops.Alarms(ctx, cli)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if *format != outputTable {
			return printStructured(out, *format, alarms)
		}
		if len(alarms) == 0 {
			_, err := fmt.Fprintf(out, "No active alarms on Etcd %s.\n", args[0])
			return err
		}
		w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "MEMBER\tID\tALARM")
		for _, a := range alarms {
			fmt.Fprintf(w, "%s\t%s\t%s\n", orDash(a.Member), a.MemberID, a.Alarm)
		}
		return w.Flush()
	}
	return cmd
}
