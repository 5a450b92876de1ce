package apis

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// TestUpstreamFieldsRoundTripThroughDruidClient writes an Etcd, an EtcdCopyBackupsTask and an EtcdOpsTask
// with every field of upstream etcd-druid's API set (filled by walking the types, so that no field can be
// forgotten) into upstream's CRDs, reads them through druid's client and types, writes them back (spec
// and status) and reads them again: nothing is lost on the way.
func TestUpstreamFieldsRoundTripThroughDruidClient(t *testing.T) {
	for _, tc := range []struct {
		kind string
		obj  func(namespace string) client.Object
	}{
		{"Etcd", fullEtcd},
		{"EtcdCopyBackupsTask", fullCopyBackupsTask},
		{"EtcdOpsTask", fullOpsTask},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			sent := tc.obj(env.CreateNamespace(t))
			sentJSON := toMap(t, sent)
			g.Expect(emptyLeaves(sentJSON, "")).To(BeEmpty(), "the filler sets every field")

			// Created as raw JSON, not through our types: a field they lacked could not hide.
			raw := &unstructured.Unstructured{Object: toMap(t, sent)}
			g.Expect(env.Client.Create(ctx, raw)).To(Succeed())
			raw.Object["status"] = sentJSON["status"]
			g.Expect(env.Client.Status().Update(ctx, raw)).To(Succeed())

			// Through druid's client: read, write back spec and status, read again.
			typed := sent.DeepCopyObject().(client.Object)
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(sent), typed)).To(Succeed())
			g.Expect(env.Client.Update(ctx, typed)).To(Succeed())
			g.Expect(env.Client.Status().Update(ctx, typed)).To(Succeed())

			back := &unstructured.Unstructured{}
			back.SetGroupVersionKind(druidv1alpha1.SchemeGroupVersion.WithKind(tc.kind))
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(sent), back)).To(Succeed())
			for _, part := range []string{"spec", "status"} {
				g.Expect(toJSON(t, back.Object[part])).To(MatchJSON(toJSON(t, sentJSON[part])), part)
			}
		})
	}
}

func toMap(t *testing.T, obj any) map[string]any {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// emptyLeaves lists the JSON paths below spec and status whose value is empty: a field the filler missed
// (omitempty drops a zero value, so it would not be tested).
func emptyLeaves(v any, path string) []string {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return []string{path}
		}
		var out []string
		for k, e := range x {
			if path == "" && k != "spec" && k != "status" {
				continue
			}
			out = append(out, emptyLeaves(e, path+"."+k)...)
		}
		return out
	case []any:
		if len(x) == 0 {
			return []string{path}
		}
		var out []string
		for i, e := range x {
			out = append(out, emptyLeaves(e, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case string:
		if x == "" {
			return []string{path}
		}
	}
	return nil
}

// fill sets every field reachable from v to a non-zero value: strings "x<n>", numbers, true, one map
// entry, one list item. Types with unexported state (quantities, times, durations) get valid values;
// fields the schema constrains further are set right by the fix functions afterwards.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Interface().(type) {
	case resource.Quantity:
		v.Set(reflect.ValueOf(resource.MustParse(fmt.Sprintf("%dMi", *n))))
		return
	case metav1.Time:
		v.Set(reflect.ValueOf(metav1.NewTime(time.Unix(1_700_000_000+int64(*n), 0).UTC())))
		return
	case metav1.Duration:
		v.Set(reflect.ValueOf(metav1.Duration{Duration: time.Duration(*n) * time.Minute}))
		return
	case intstr.IntOrString:
		v.Set(reflect.ValueOf(intstr.FromInt32(int32(*n))))
		return
	case metav1.TypeMeta, metav1.ObjectMeta, metav1.ListMeta:
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("x%d", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		key, value := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(key, n)
		fill(value, n)
		m.SetMapIndex(key, value)
		v.Set(m)
	default:
		panic(fmt.Sprintf("fill: unhandled kind %s of %s", v.Kind(), v.Type()))
	}
}

func filled[T any](obj *T) *T {
	n := 0
	fill(reflect.ValueOf(obj).Elem(), &n)
	return obj
}

// fixStore makes a filled store valid for upstream's schema (a bucket name, a URL).
func fixStore(s *druidv1alpha1.StoreSpec) {
	s.Container = ptr.To("bucket-1")
	s.EndpointOverride = ptr.To("https://s3.example.com")
	s.Provider = ptr.To(druidv1alpha1.StorageProviderS3)
}

// fixResources makes filled resource requirements pass the apiserver (claims name a DNS label).
func fixResources(r *corev1.ResourceRequirements) {
	r.Claims = []corev1.ResourceClaim{{Name: "claim-1", Request: "req-1"}}
	r.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	r.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
}

func fullEtcd(namespace string) client.Object {
	etcd := filled(&druidv1alpha1.Etcd{})
	etcd.TypeMeta = metav1.TypeMeta{APIVersion: druidv1alpha1.SchemeGroupVersion.String(), Kind: "Etcd"}
	etcd.ObjectMeta = metav1.ObjectMeta{Name: "etcd-main", Namespace: namespace}
	s := &etcd.Spec
	s.Replicas = 3
	s.ExternallyManagedMemberAddresses = []string{"10.0.0.1", "10.0.0.2", "etcd-2.example.com"}
	s.MemberNamePrefix = ptr.To("garden")
	s.Common.AutoCompactionMode = ptr.To(druidv1alpha1.Periodic)
	s.Common.AutoCompactionRetention = ptr.To("30m")
	s.StorageCapacity = ptr.To(resource.MustParse("10Gi"))

	e := &s.Etcd
	e.Metrics = ptr.To(druidv1alpha1.Extensive)
	e.BackendBboltFreelistType = ptr.To(druidv1alpha1.BboltFreelistMap)
	e.DefragmentationSchedule = ptr.To("12 3 * * 6")
	e.ClientService.TrafficDistribution = ptr.To("PreferClose")
	e.AdditionalAdvertisePeerURLs = []druidv1alpha1.MemberPeerURLs{{MemberName: "garden-etcd-main-0", URLs: []string{"https://10.0.0.1:2380"}}}
	e.BootstrapWithExistingCluster.Members = []druidv1alpha1.BootstrapExistingMember{{Name: "source-0", PeerURLs: []string{"https://source-0:2380"}}}
	e.BootstrapWithExistingCluster.ClientEndpoints = []string{"https://source-client:2379"}
	fixResources(e.Resources)

	b := &s.Backup
	fixStore(b.Store)
	fixResources(b.Resources)
	fixResources(b.SnapshotCompaction.Resources)
	b.FullSnapshotSchedule = ptr.To("0 */6 * * *")
	b.GarbageCollectionPolicy = ptr.To(druidv1alpha1.GarbageCollectionPolicyLimitBased)
	b.DeltaSnapshotPeriod = &metav1.Duration{Duration: 5 * time.Minute}
	b.GarbageCollectionPeriod = &metav1.Duration{Duration: 12 * time.Hour}
	b.SnapshotCompression.Policy = ptr.To(druidv1alpha1.ZlibCompression)

	fixScheduling(&s.SchedulingConstraints)
	return etcd
}

// fixScheduling keeps the filled affinity, spread constraints and tolerations but makes their operators
// and label selectors valid for the apiserver's pod rules as far as the CRD checks them (types only); the
// values stay as filled.
func fixScheduling(c *druidv1alpha1.SchedulingConstraints) {
	c.Tolerations[0].Operator = corev1.TolerationOpEqual
	c.Tolerations[0].Effect = corev1.TaintEffectNoExecute
}

func fullCopyBackupsTask(namespace string) client.Object {
	task := filled(&druidv1alpha1.EtcdCopyBackupsTask{})
	task.TypeMeta = metav1.TypeMeta{APIVersion: druidv1alpha1.SchemeGroupVersion.String(), Kind: "EtcdCopyBackupsTask"}
	task.ObjectMeta = metav1.ObjectMeta{Name: "copy", Namespace: namespace}
	fixStore(&task.Spec.SourceStore)
	fixStore(&task.Spec.TargetStore)
	task.Spec.TargetStore.Container = ptr.To("bucket-2")
	return task
}

func fullOpsTask(namespace string) client.Object {
	task := filled(&druidv1alpha1.EtcdOpsTask{})
	task.TypeMeta = metav1.TypeMeta{APIVersion: druidv1alpha1.SchemeGroupVersion.String(), Kind: "EtcdOpsTask"}
	task.ObjectMeta = metav1.ObjectMeta{Name: "snapshot", Namespace: namespace}
	task.Spec.Config.OnDemandSnapshot.Type = druidv1alpha1.OnDemandSnapshotTypeFull
	task.Spec.Config.OnDemandSnapshot.TimeoutSecondsDelta = ptr.To[int32](60)
	task.Spec.Config.OnDemandSnapshot.TimeoutSecondsFull = ptr.To[int32](900)
	task.Status.State = ptr.To(druidv1alpha1.TaskStateSucceeded)
	task.Status.LastOperation.Type = druidv1alpha1.LastOperationTypeExecution
	task.Status.LastOperation.State = druidv1alpha1.LastOperationStateCompleted
	return task
}
