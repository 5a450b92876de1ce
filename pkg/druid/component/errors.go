package component

import (
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Operation names the Operator call that failed; it is part of the error code so that an operator reading
// status.lastErrors knows whether creating or deleting an object went wrong.
type Operation string

const (
	// OperationSync is Operator.Sync.
	OperationSync Operation = "SYNC"
	// OperationDelete is Operator.TriggerDelete.
	OperationDelete Operation = "DELETE"
	// OperationGet is Operator.GetExistingResourceNames.
	OperationGet Operation = "GET"
)

// ErrorCodeUnknown is the code recorded for an error that no operator wrapped (a programming mistake).
const ErrorCodeUnknown druidv1alpha1.ErrorCode = "ERR_UNKNOWN"

// ErrorCodeFor is the stable code of a failed operation on a kind, e.g. ERR_SYNC_STATEFULSET. The codes are
// part of the status contract: alerts and runbooks match on them, so they never change for a kind.
func ErrorCodeFor(op Operation, kind Kind) druidv1alpha1.ErrorCode {
	return druidv1alpha1.ErrorCode(fmt.Sprintf("ERR_%s_%s", op, kind.codeName()))
}

// Error is a failed operator call with a stable code. The Etcd controller copies Code and the message into
// status.lastErrors; Cause keeps the underlying apiserver error for logs and errors.Is/As.
type Error struct {
	// Code is stable (see ErrorCodeFor).
	Code druidv1alpha1.ErrorCode
	// Message says what the operator tried to do, in words an operator understands.
	Message string
	// Cause is the underlying error.
	Cause error
}

// Error renders "<code>: <message>: <cause>".
func (e *Error) Error() string {
	if e.Cause == nil {
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
}

// Unwrap exposes the cause to errors.Is/As (e.g. apierrors.IsConflict).
func (e *Error) Unwrap() error { return e.Cause }

// WrapError wraps cause with the code of op on kind; it returns nil when cause is nil so that operators
// can write `return component.WrapError(err, …)` at the end of a call.
func WrapError(cause error, op Operation, kind Kind, format string, args ...any) error {
	if cause == nil {
		return nil
	}
	return &Error{Code: ErrorCodeFor(op, kind), Message: fmt.Sprintf(format, args...), Cause: cause}
}

// AsLastError converts any error returned by an operator into the status.lastErrors entry the controller
// records; errors without a code get ErrorCodeUnknown rather than being dropped.
func AsLastError(err error, observedAt time.Time) druidv1alpha1.LastError {
	code := ErrorCodeUnknown
	var coded *Error
	if errors.As(err, &coded) {
		code = coded.Code
	}
	return druidv1alpha1.LastError{Code: code, Description: err.Error(), ObservedAt: metav1.NewTime(observedAt)}
}

// DefaultRequeueAfter is how long a caller waits before retrying when a precondition is not met yet; the
// reference's scale-up sequence polls member leases every 10 s.
const DefaultRequeueAfter = 10 * time.Second

// RequeueError means "a precondition is not met yet, retried later": it is not a failure (nothing goes
// into status.lastErrors, lastOperation.state becomes Requeue) but the flow must stop here, because later
// steps depend on this one being complete. The peer-TLS scale-up uses it while members restart with TLS.
type RequeueError struct {
	// After is when to retry.
	After time.Duration
	// Reason tells which precondition is missing; it goes into lastOperation.description and the logs.
	Reason string
	// Event is the reason of the event the spec flow records for the requeue; empty means the scale-up
	// hold's.
	Event string
}

// Error renders the reason so that a RequeueError logged as an error still reads well.
func (e *RequeueError) Error() string {
	return fmt.Sprintf("requeue after %s: %s", e.After, e.Reason)
}

// Requeue returns a RequeueError; after <= 0 means DefaultRequeueAfter.
func Requeue(after time.Duration, format string, args ...any) error {
	if after <= 0 {
		after = DefaultRequeueAfter
	}
	return &RequeueError{After: after, Reason: fmt.Sprintf(format, args...)}
}

// RequeueWithEvent is Requeue with the reason of the event to record.
func RequeueWithEvent(after time.Duration, event, format string, args ...any) error {
	if after <= 0 {
		after = DefaultRequeueAfter
	}
	return &RequeueError{After: after, Reason: fmt.Sprintf(format, args...), Event: event}
}

// IsRequeue tells whether err (or an error it wraps) is a RequeueError and returns it.
func IsRequeue(err error) (*RequeueError, bool) {
	var r *RequeueError
	if errors.As(err, &r) {
		return r, true
	}
	return nil, false
}
