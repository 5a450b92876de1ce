package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of etcd-druid's resources.
const GroupName = "druid.gardener.cloud"

// SchemeGroupVersion is the group version the types of this package are served under.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

var (
	// SchemeBuilder collects the functions that register this package's types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme registers Etcd, EtcdCopyBackupsTask and EtcdOpsTask (and their lists) with a scheme, so that clients and
	// controllers can decode them.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns a GroupResource of this group, for building API errors.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Etcd{}, &EtcdList{},
		&EtcdCopyBackupsTask{}, &EtcdCopyBackupsTaskList{},
		&EtcdOpsTask{}, &EtcdOpsTaskList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
