// Package hostile holds the rows of the hostile-object sweep: each row changes one thing of a valid object
// and says what druid's Etcd validation must answer. The validation webhook's sweep
// (test/integration/webhook) sends them through the apiserver; the druid suites send the refused ones to
// the reconcilers directly, as under a deployment that registers no validation webhook (gardenlet's).
package hostile

import "sigs.k8s.io/controller-runtime/pkg/client"

// Case is one row: a change to a valid object of kind T and the outcome of validating the changed object
// on create.
type Case[T client.Object] struct {
	Name   string
	Mutate func(T)
	Want   Outcome
}

// Outcome is what validating a create must come to: refused naming a field, or admitted (with a warning).
type Outcome struct {
	// RefusedAt is the field path (or a text) the refusal must contain; "" means admitted.
	RefusedAt string
	// Warning is a text one warning must contain; only for admitted objects.
	Warning string
	// Absent is a text neither the refusal nor any warning may contain (e.g. a credential).
	Absent string
}

// Refused expects a refusal that names fld.
func Refused(fld string) Outcome { return Outcome{RefusedAt: fld} }

// Warned expects admission with a warning containing text.
func Warned(text string) Outcome { return Outcome{Warning: text} }

// Admitted expects admission.
var Admitted = Outcome{}
