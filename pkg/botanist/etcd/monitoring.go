package etcd

import (
	"context"
	"fmt"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// The per-shoot monitoring objects, as Gardener's etcd component writes them: the shoot's Prometheus selects
// ServiceMonitors and PrometheusRules labelled prometheus=shoot in the control-plane namespace, and its
// dashboards and Alertmanager routes rely on the job names and alert labels below.
const (
	// shootPrometheus is the Prometheus of a shoot control plane; it prefixes the objects' names and labels them.
	shootPrometheus = "shoot"
	// druidScrapeConfigName is a ScrapeConfig older Gardener versions wrote per namespace; Destroy removes it
	// as Gardener does.
	druidScrapeConfigName = shootPrometheus + "-etcd-druid"

	portClient        = "client"
	portBackupRestore = "backuprestore"
)

var (
	serviceMonitorGVK = monitoringv1.SchemeGroupVersion.WithKind(monitoringv1.ServiceMonitorsKind)
	prometheusRuleGVK = monitoringv1.SchemeGroupVersion.WithKind(monitoringv1.PrometheusRuleKind)
	scrapeConfigGVK   = schema.GroupVersionKind{Group: monitoringv1.SchemeGroupVersion.Group, Version: "v1alpha1", Kind: "ScrapeConfig"}
)

// backupRestoreMetrics are the sidecar metrics the shoot's Prometheus keeps (Gardener's list); the rest are
// dropped at scrape time.
var backupRestoreMetrics = []string{
	"etcdbr_defragmentation_duration_seconds_bucket",
	"etcdbr_defragmentation_duration_seconds_count",
	"etcdbr_defragmentation_duration_seconds_sum",
	"etcdbr_network_received_bytes",
	"etcdbr_network_transmitted_bytes",
	"etcdbr_restoration_duration_seconds_bucket",
	"etcdbr_restoration_duration_seconds_count",
	"etcdbr_restoration_duration_seconds_sum",
	"etcdbr_snapshot_duration_seconds_bucket",
	"etcdbr_snapshot_duration_seconds_count",
	"etcdbr_snapshot_duration_seconds_sum",
	"etcdbr_snapshot_gc_total",
	"etcdbr_snapshot_latest_revision",
	"etcdbr_snapshot_latest_timestamp",
	"etcdbr_snapshot_required",
	"etcdbr_validation_duration_seconds_bucket",
	"etcdbr_validation_duration_seconds_count",
	"etcdbr_validation_duration_seconds_sum",
	"etcdbr_snapshotter_failure",
	"etcdbr_cluster_size",
	"etcdbr_is_learner",
	"etcdbr_is_learner_count_total",
	"etcdbr_add_learner_duration_seconds_bucket",
	"etcdbr_add_learner_duration_seconds_sum",
	"etcdbr_member_remove_duration_seconds_bucket",
	"etcdbr_member_remove_duration_seconds_sum",
	"etcdbr_member_promote_duration_seconds_bucket",
	"etcdbr_member_promote_duration_seconds_sum",
	"process_resident_memory_bytes",
	"process_cpu_seconds_total",
}

// jobEtcd and jobBackupRestore are the job labels the ServiceMonitor gives the two endpoints' series; the
// rules select on them.
func jobEtcd(role string) string          { return "kube-etcd3-" + role }
func jobBackupRestore(role string) string { return "kube-etcd3-backup-restore-" + role }

// monitoringName is shoot-etcd-<role>, the name of both the ServiceMonitor and the PrometheusRule.
func (e *etcd) monitoringName() string { return shootPrometheus + "-" + e.name() }

func (e *etcd) monitoringMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: e.namespace, Labels: map[string]string{"prometheus": shootPrometheus}}
}

// serviceMonitor scrapes etcd (client port) and its backup-restore sidecar through druid's client Service,
// with the client certificate the kube-apiserver also uses; the certificates name no pod IP, so the
// server's name is not verified.
func (e *etcd) serviceMonitor() *monitoringv1.ServiceMonitor {
	endpoint := func(port, job string, keep []monitoringv1.RelabelConfig) monitoringv1.Endpoint {
		ep := monitoringv1.Endpoint{
			Port:   port,
			Scheme: ptr.To(monitoringv1.SchemeHTTPS),
			RelabelConfigs: []monitoringv1.RelabelConfig{
				{SourceLabels: []monitoringv1.LabelName{"__meta_kubernetes_service_label_app_kubernetes_io_part_of"}, TargetLabel: "role"},
				{Action: "replace", Replacement: ptr.To(job), TargetLabel: "job"},
			},
			MetricRelabelConfigs: append([]monitoringv1.RelabelConfig{{Action: "labeldrop", Regex: `^instance$`}}, keep...),
		}
		ep.TLSConfig = &monitoringv1.TLSConfig{SafeTLSConfig: monitoringv1.SafeTLSConfig{
			InsecureSkipVerify: ptr.To(true),
			Cert: monitoringv1.SecretOrConfigMap{Secret: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: ClientSecretName},
				Key:                  DataKeyCertificate,
			}},
			KeySecret: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: ClientSecretName},
				Key:                  DataKeyPrivateKey,
			},
		}}
		return ep
	}
	keepBackupRestore := []monitoringv1.RelabelConfig{{
		SourceLabels: []monitoringv1.LabelName{"__name__"},
		Action:       "keep",
		Regex:        "^(" + strings.Join(backupRestoreMetrics, "|") + ")$",
	}}
	return &monitoringv1.ServiceMonitor{
		ObjectMeta: e.monitoringMeta(e.monitoringName()),
		Spec: monitoringv1.ServiceMonitorSpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{
				druidv1alpha1.LabelAppNameKey: e.name() + "-client",
				druidv1alpha1.LabelPartOfKey:  e.name(),
			}},
			Endpoints: []monitoringv1.Endpoint{
				endpoint(portClient, jobEtcd(e.values.Role), nil),
				endpoint(portBackupRestore, jobBackupRestore(e.values.Role), keepBackupRestore),
			},
		},
	}
}

// prometheusRule is the etcd's alerting rules (assets/prometheusrule.yaml.tmpl) for the members Deploy
// asks for; backup adds the backup alerts.
func (e *etcd) prometheusRule(replicas int32, backup bool) (*monitoringv1.PrometheusRule, error) {
	spec, err := prometheusRuleSpec(newRuleInputs(e.values.Role, e.values.Class, replicas, backup))
	if err != nil {
		return nil, err
	}
	return &monitoringv1.PrometheusRule{ObjectMeta: e.monitoringMeta(e.monitoringName()), Spec: spec}, nil
}

// reconcileMonitoring writes the ServiceMonitor and the PrometheusRule shoot-etcd-<role>. A cluster without
// the prometheus-operator API (no monitoring.coreos.com kinds) is not an error: the etcd runs the same
// without them, so Deploy logs one line and goes on, and a non-Gardener cluster needs no monitoring stack.
//
// The objects are written unstructured so that the caller's client scheme need not know the
// prometheus-operator types.
func (e *etcd) reconcileMonitoring(ctx context.Context, replicas int32, backup bool) error {
	rule, err := e.prometheusRule(replicas, backup)
	if err != nil {
		return err
	}
	for _, obj := range []struct {
		gvk schema.GroupVersionKind
		obj client.Object
	}{{serviceMonitorGVK, e.serviceMonitor()}, {prometheusRuleGVK, rule}} {
		if err := e.writeMonitoringObject(ctx, obj.gvk, obj.obj); meta.IsNoMatchError(err) {
			e.logger(ctx).Info("Not writing the etcd's monitoring objects: the cluster does not serve the prometheus-operator API", "kind", obj.gvk.Kind)
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

// writeMonitoringObject creates the object or sets its spec and our labels; labels others added stay (a
// seed's tooling may label them).
func (e *etcd) writeMonitoringObject(ctx context.Context, gvk schema.GroupVersionKind, desired client.Object) error {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	if err != nil {
		return fmt.Errorf("converting %s %s/%s: %w", gvk.Kind, e.namespace, desired.GetName(), err)
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(desired.GetNamespace())
	obj.SetName(desired.GetName())
	_, err = controllerutil.CreateOrUpdate(ctx, e.client, obj, func() error {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range desired.GetLabels() {
			labels[k] = v
		}
		obj.SetLabels(labels)
		obj.Object["spec"] = content["spec"]
		return nil
	})
	if err != nil {
		return fmt.Errorf("writing %s %s/%s: %w", gvk.Kind, e.namespace, desired.GetName(), err)
	}
	return nil
}

// deleteMonitoring deletes the ServiceMonitor, the PrometheusRule and Gardener's old druid ScrapeConfig;
// missing objects and a cluster without the prometheus-operator API have nothing to delete.
func (e *etcd) deleteMonitoring(ctx context.Context) error {
	for _, target := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{{serviceMonitorGVK, e.monitoringName()}, {prometheusRuleGVK, e.monitoringName()}, {scrapeConfigGVK, druidScrapeConfigName}} {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(target.gvk)
		obj.SetNamespace(e.namespace)
		obj.SetName(target.name)
		if err := e.client.Delete(ctx, obj); err != nil && !meta.IsNoMatchError(err) && client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s %s/%s: %w", target.gvk.Kind, e.namespace, target.name, err)
		}
	}
	return nil
}
