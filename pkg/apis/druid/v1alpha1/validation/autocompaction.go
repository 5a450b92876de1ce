package validation

import (
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// validateAutoCompactionRetention checks spec.sharedConfig.autoCompactionRetention as etcd parses
// --auto-compaction-retention, which it gets verbatim (and so does the restorer's embedded etcd): in
// periodic mode (the default) a duration such as 30m or a whole number of hours, in revision mode a
// whole number of revisions. etcd refuses anything else at start, so every member would crash-loop.
func validateAutoCompactionRetention(shared *druidv1alpha1.SharedConfig, fld *field.Path) field.ErrorList {
	if shared.AutoCompactionRetention == nil {
		return nil
	}
	value := *shared.AutoCompactionRetention
	at := fld.Child("autoCompactionRetention")
	if n, err := strconv.ParseInt(value, 10, 64); err == nil {
		if n < 0 {
			return field.ErrorList{field.Invalid(at, value, "must not be negative")}
		}
		return nil
	}
	if ptr.Deref(shared.AutoCompactionMode, druidv1alpha1.DefaultAutoCompactionMode) == druidv1alpha1.Revision {
		return field.ErrorList{field.Invalid(at, value, "must be a whole number of revisions in revision mode, e.g. 1000")}
	}
	d, err := time.ParseDuration(value)
	if err != nil {
		return field.ErrorList{field.Invalid(at, value, fmt.Sprintf("must be a duration such as 30m or a whole number of hours in periodic mode: %v", err))}
	}
	if d < 0 {
		return field.ErrorList{field.Invalid(at, value, "must not be negative")}
	}
	return nil
}
