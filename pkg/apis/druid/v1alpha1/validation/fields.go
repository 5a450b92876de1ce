package validation

import (
	"fmt"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// cronParser accepts the standard five-field schedules the sidecar runs with robfig/cron.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

func validateSchedule(schedule *string, fld *field.Path) field.ErrorList {
	if schedule == nil {
		return nil
	}
	if _, err := cronParser.Parse(*schedule); err != nil {
		return field.ErrorList{field.Invalid(fld, *schedule, fmt.Sprintf("must be a five-field cron schedule such as \"0 */24 * * *\": %v", err))}
	}
	return nil
}

func validatePort(port *int32, fld *field.Path) field.ErrorList {
	if port != nil && (*port < 1 || *port > 65535) {
		return field.ErrorList{field.Invalid(fld, *port, "must be a port number from 1 to 65535")}
	}
	return nil
}

func validatePositiveQuantity(q *resource.Quantity, fld *field.Path) field.ErrorList {
	if q != nil && q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(fld, q.String(), "must be greater than zero")}
	}
	return nil
}

func validateNonNegativeDuration(d *metav1.Duration, fld *field.Path) field.ErrorList {
	if d != nil && d.Duration < 0 {
		return field.ErrorList{field.Invalid(fld, d.Duration.String(), "must not be negative")}
	}
	return nil
}

func validateEnum[T ~string](value T, fld *field.Path, allowed ...T) field.ErrorList {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return field.ErrorList{field.NotSupported(fld, value, names)}
}
