package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

func newShootDeployCommand(o *shootOptions) *cobra.Command {
	var (
		highAvailability bool
		backupEntry      string
		replicas         int32
	)
	cmd := &cobra.Command{
		Use:   "deploy",
		Short: "Write the Etcds (TLS secrets, backup store from the BackupEntry) and wait until druid reports them ready",
		RunE: func(cmd *cobra.Command, _ []string) error {
			roles, err := o.roles()
			if err != nil {
				return err
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			ctx, out := o.context(cmd), cmd.OutOrStdout()
			run := func() error {
				for _, role := range roles {
					v := o.values(role)
					v.HighAvailability = highAvailability
					if cmd.Flags().Changed("replicas") {
						v.Replicas = &replicas
					}
					if role == etcd.RoleMain && backupEntry != "" {
						v.BackupConfig = &etcd.BackupConfig{BackupEntryName: backupEntry}
						fmt.Fprintf(out, "Waiting for BackupEntry %s, then deploying %s in %s ...\n", backupEntry, etcd.Name(role), o.namespace)
					} else {
						fmt.Fprintf(out, "Deploying %s in %s ...\n", etcd.Name(role), o.namespace)
					}
					if err := o.deployRetrying(ctx, out, etcd.New(c, o.namespace, v), etcd.Name(role)); err != nil {
						return err
					}
					fmt.Fprintf(out, "%s written\n", etcd.Name(role))
				}
				return o.waitReady(ctx, out, c, roles)
			}
			return o.finish(ctx, out, c, run())
		},
	}
	cmd.Flags().BoolVar(&highAvailability, "ha", false, "run three members with peer TLS (a single member is scaled up)")
	cmd.Flags().StringVar(&backupEntry, "backup-entry", "", "BackupEntry <shoot-namespace>--<uid> whose store etcd-main backs up to")
	cmd.Flags().Int32Var(&replicas, "replicas", 0, "number of members (default: keep, or 1, or 3 with --ha)")
	return cmd
}

func newShootScaleCommand(o *shootOptions) *cobra.Command {
	var replicas int32
	cmd := &cobra.Command{
		Use:   "scale",
		Short: "Change the number of members (peer TLS is enabled when going beyond one) and wait for the rollout",
		RunE: func(cmd *cobra.Command, _ []string) error {
			roles, err := o.roles()
			if err != nil {
				return err
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			ctx, out := o.context(cmd), cmd.OutOrStdout()
			run := func() error {
				for _, role := range roles {
					fmt.Fprintf(out, "Scaling %s in %s to %d ...\n", etcd.Name(role), o.namespace, replicas)
					if err := etcd.New(c, o.namespace, o.values(role)).Scale(ctx, replicas); err != nil {
						return err
					}
				}
				return o.waitReady(ctx, out, c, roles)
			}
			return o.finish(ctx, out, c, run())
		},
	}
	cmd.Flags().Int32Var(&replicas, "replicas", 0, "number of members: 0 (hibernate) or odd (required)")
	_ = cmd.MarkFlagRequired("replicas")
	return cmd
}

func newShootSnapshotCommand(o *shootOptions) *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Ask the backup-restore sidecar for a final full snapshot",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.role == "" {
				o.role = etcd.RoleMain
			}
			roles, err := o.roles()
			if err != nil {
				return err
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			ctx, out := o.context(cmd), cmd.OutOrStdout()
			run := func() error {
				v := o.values(roles[0])
				v.SnapshotTransport.BaseURL = url
				fmt.Fprintf(out, "Requesting a full snapshot of %s in %s ...\n", etcd.Name(roles[0]), o.namespace)
				answer, err := etcd.New(c, o.namespace, v).Snapshot(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "Snapshot taken: %s\n", answer)
				return nil
			}
			return o.finish(ctx, out, c, run())
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "base URL of the sidecar, e.g. through a port-forward (default https://etcd-<role>-client.<namespace>:8080)")
	return cmd
}

func newShootDestroyCommand(o *shootOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "destroy",
		Short: "Delete the Etcds and wait until druid removed them",
		RunE: func(cmd *cobra.Command, _ []string) error {
			roles, err := o.roles()
			if err != nil {
				return err
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			ctx, out := o.context(cmd), cmd.OutOrStdout()
			run := func() error {
				for _, role := range roles {
					fmt.Fprintf(out, "Deleting %s in %s ...\n", etcd.Name(role), o.namespace)
					if err := etcd.New(c, o.namespace, o.values(role)).Destroy(ctx); err != nil {
						return err
					}
				}
				if !o.wait {
					return nil
				}
				for _, role := range roles {
					fmt.Fprintf(out, "Waiting for %s to be gone ...\n", etcd.Name(role))
					if err := etcd.New(c, o.namespace, o.values(role)).WaitCleanup(ctx); err != nil {
						return err
					}
				}
				return nil
			}
			return o.finish(ctx, out, c, run())
		},
	}
}
