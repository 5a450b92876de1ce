package v1alpha1

import (
	upstream "github.com/gardener/etcd-druid/api/core/v1alpha1"
)

// GroupName is the API group of etcd-druid's resources.
const GroupName = upstream.GroupName

// SchemeGroupVersion is the group version the types of this package are served under.
var SchemeGroupVersion = upstream.SchemeGroupVersion

// AddToScheme registers Etcd, EtcdCopyBackupsTask and EtcdOpsTask (and their lists) with a scheme, so that
// clients and controllers can decode them (upstream's registration).
var AddToScheme = upstream.AddToScheme

// Resource returns a GroupResource of this group, for building API errors.
var Resource = upstream.Resource
