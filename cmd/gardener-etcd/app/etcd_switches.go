package app

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdops"
)

func newEtcdSuspendCommand(o *etcdOptions) *cobra.Command {
	return newSetSwitchCommand(o, etcdops.SuspendSpecReconcile, "suspend NAME",
		"Suspend druid's spec reconciles of an Etcd (its status is still updated), with a reason")
}

func newEtcdResumeCommand(o *etcdOptions) *cobra.Command {
	return newUnsetSwitchCommand(o, etcdops.SuspendSpecReconcile, "resume NAME",
		"Resume druid's spec reconciles of an Etcd suspended before")
}

func newEtcdProtectionCommand(o *etcdOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "protection",
		Short: "Switch the component protection of an Etcd's druid-managed objects off (with a reason) and on again",
	}
	cmd.AddCommand(
		newSetSwitchCommand(o, etcdops.DisableComponentProtection, "off NAME",
			"Let changes to the Etcd's StatefulSet, leases, services, ... through the protection webhook"),
		newUnsetSwitchCommand(o, etcdops.DisableComponentProtection, "on NAME",
			"Protect the Etcd's druid-managed objects again"),
	)
	return cmd
}

// newSetSwitchCommand sets the switch's annotation with --reason as its value.
func newSetSwitchCommand(o *etcdOptions, s etcdops.Switch, use, short string) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, key, err := o.etcdKey(args)
			if err != nil {
				return err
			}
			change, err := etcdops.SetSwitch(o.context(cmd), c, key, s, reason)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if !change.Changed {
				_, err := fmt.Fprintf(out, "%s: %s already (%s: %s)\n", etcdName(key), s.Set, s.Annotation, reason)
				return err
			}
			fmt.Fprintf(out, "%s: %s (%s: %s)\n", etcdName(key), s.Set, s.Annotation, reason)
			return printReasonBefore(out, change)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (required): the annotation's value, for whoever looks next")
	_ = cmd.MarkFlagRequired("reason")
	return cmd
}

// newUnsetSwitchCommand removes the switch's annotation.
func newUnsetSwitchCommand(o *etcdOptions, s etcdops.Switch, use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, key, err := o.etcdKey(args)
			if err != nil {
				return err
			}
			change, err := etcdops.UnsetSwitch(o.context(cmd), c, key, s)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if !change.Changed {
				_, err := fmt.Fprintf(out, "%s: %s already (no %s)\n", etcdName(key), s.Unset, s.Annotation)
				return err
			}
			fmt.Fprintf(out, "%s: %s (%s removed)\n", etcdName(key), s.Unset, s.Annotation)
			return printReasonBefore(out, change)
		},
	}
}

func printReasonBefore(out io.Writer, change etcdops.Change) error {
	if change.Before == nil {
		return nil
	}
	_, err := fmt.Fprintf(out, "  the reason before was: %s\n", *change.Before)
	return err
}

func etcdName(key types.NamespacedName) string {
	return fmt.Sprintf("Etcd %s in namespace %s", key.Name, key.Namespace)
}
