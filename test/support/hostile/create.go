package hostile

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateRefused creates, through c, one object per row the validation refuses: fresh() changed by the row,
// named sweep-<row index>. Rows the CRD schema itself refuses (the apiserver stores nothing) are left out;
// the result maps the row index to the stored object. Suites without the validation webhook use it to show
// that druid refuses the rest itself.
func CreateRefused[T client.Object](ctx context.Context, c client.Client, rows []Case[T], fresh func() T) (map[int]T, error) {
	created := map[int]T{}
	for i, row := range rows {
		if row.Want.RefusedAt == "" {
			continue
		}
		obj := fresh()
		obj.SetName(fmt.Sprintf("sweep-%03d", i))
		row.Mutate(obj)
		if err := c.Create(ctx, obj); err != nil {
			if apierrors.IsInvalid(err) {
				continue // the schema refuses it
			}
			return nil, fmt.Errorf("row %q: %w", row.Name, err)
		}
		created[i] = obj
	}
	return created, nil
}
