package app

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// etcdOptions are the flags of the operator commands on Etcd resources. They follow kubectl: the
// namespace comes from -n, else from the kubeconfig's current context, else "default".
type etcdOptions struct {
	*globalOptions
	namespace string
}

func newEtcdCommand(g *globalOptions) *cobra.Command {
	o := &etcdOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "etcd",
		Short: "Inspect and steer the Etcd resources of any cluster that serves the druid API",
	}
	cmd.PersistentFlags().StringVarP(&o.namespace, "namespace", "n", "", "namespace of the Etcd (default: the kubeconfig context's, else default)")
	cmd.AddCommand(newEtcdListCommand(o), newEtcdMembersCommand(o))
	cmd.AddCommand(newEtcdSuspendCommand(o), newEtcdResumeCommand(o), newEtcdProtectionCommand(o))
	cmd.AddCommand(newEtcdSnapshotCommand(o), newEtcdAlarmsCommand(o), newEtcdDefragmentCommand(o))
	cmd.AddCommand(newEtcdRestoreToRevisionCommand(o))
	return cmd
}

// connect loads the kubeconfig as kubectl does (--kubeconfig, $KUBECONFIG, ~/.kube/config) and returns a
// client and the namespace to act in.
func (o *etcdOptions) connect() (client.Client, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	overrides := &clientcmd.ConfigOverrides{}
	overrides.Context.Namespace = o.namespace
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("loading the kubeconfig: %w", err)
	}
	namespace, _, err := loader.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	return c, namespace, err
}

// etcdKey connects and names the Etcd of the command's single argument.
func (o *etcdOptions) etcdKey(args []string) (client.Client, types.NamespacedName, error) {
	c, namespace, err := o.connect()
	if err != nil {
		return nil, types.NamespacedName{}, err
	}
	return c, types.NamespacedName{Namespace: namespace, Name: args[0]}, nil
}

// Output formats of -o, as kubectl names them.
const (
	outputTable = "table"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

// outputFlag adds -o/--output to cmd and returns where its value lands.
func outputFlag(cmd *cobra.Command) *string {
	format := outputTable
	cmd.Flags().StringVarP(&format, "output", "o", outputTable, "output format: table, json or yaml")
	return &format
}

// checkOutput refuses an unknown -o before the command does anything.
func checkOutput(format string) error {
	switch format {
	case outputTable, outputJSON, outputYAML:
		return nil
	}
	return fmt.Errorf("--output must be table, json or yaml, not %q", format)
}

// printStructured writes v as indented JSON or as YAML.
func printStructured(out io.Writer, format string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if format == outputYAML {
		if data, err = yaml.JSONToYAML(data); err != nil {
			return err
		}
	} else {
		data = append(data, '\n')
	}
	_, err = out.Write(data)
	return err
}

// age is a time as kubectl's AGE column shows it ("5m", "2d3h"), "-" for none.
func age(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t))
}

// orDash is s, or "-" for an empty cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
