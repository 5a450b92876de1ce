// Package coreevents records druid's events as core/v1 Events. controller-runtime's recorders write
// events.k8s.io/v1, which a role that grants only core `events` cannot create: Gardener's ClusterRole for
// etcd-druid is such a role, and every druid event was dropped there. Both APIs serve the same objects, so
// events written here are read through either; druid's own chart grants core events only.
//
// The recorders keep the events.k8s.io/v1 recorder interface (action, related object, series of repeated
// events): client-go's events broadcaster builds the events, and only its sink writes core/v1. client-go's
// adapter to the core recorder would drop the action, which druid's events carry as their step.
package coreevents

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Manager is a manager whose GetEventRecorder records core/v1 Events; everything else is the wrapped
// manager's. Controllers take it wherever they take a manager.
type Manager struct {
	manager.Manager
	broadcaster events.EventBroadcaster
}

// Wrap returns mgr with core/v1 event recorders. Recording runs until ctx ends (the manager's lifetime).
func Wrap(ctx context.Context, mgr manager.Manager, restConfig *rest.Config) (*Manager, error) {
	clientset, err := kubernetes.NewForConfigAndClient(restConfig, mgr.GetHTTPClient())
	if err != nil {
		return nil, fmt.Errorf("building the events client: %w", err)
	}
	broadcaster := events.NewBroadcaster(Sink{Events: clientset.CoreV1()})
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		return nil, fmt.Errorf("starting the event recording: %w", err)
	}
	go func() {
		<-ctx.Done()
		broadcaster.Shutdown()
	}()
	return &Manager{Manager: mgr, broadcaster: broadcaster}, nil
}

// GetEventRecorder returns a recorder reporting as name, writing core/v1 Events.
func (m *Manager) GetEventRecorder(name string) recorder.EventRecorder {
	// client-go's recorder has AnnotatedEventf on its concrete type, which is what controller-runtime's
	// interface asks for beyond the events.EventRecorder interface.
	return m.broadcaster.NewRecorder(m.GetScheme(), name).(recorder.EventRecorder)
}

// Sink writes the events.k8s.io/v1 Events of client-go's events broadcaster as core/v1 Events.
type Sink struct {
	Events typedcorev1.EventsGetter
}

var _ events.EventSink = Sink{}

// Create creates the event.
func (s Sink) Create(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	created, err := s.Events.Events(event.Namespace).Create(ctx, ToCore(event), metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return FromCore(created), nil
}

// Update updates the event.
func (s Sink) Update(ctx context.Context, event *eventsv1.Event) (*eventsv1.Event, error) {
	updated, err := s.Events.Events(event.Namespace).Update(ctx, ToCore(event), metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return FromCore(updated), nil
}

// Patch records a repetition: the broadcaster patches only the series of an event it already wrote, and
// event carries the series to write (its patch is of the events.k8s.io shape, so it is not passed on).
func (s Sink) Patch(ctx context.Context, event *eventsv1.Event, _ []byte) (*eventsv1.Event, error) {
	if event.Series == nil {
		return nil, fmt.Errorf("patching event %s/%s: no series to record", event.Namespace, event.Name)
	}
	patch, err := json.Marshal(map[string]any{"series": corev1.EventSeries{
		Count: event.Series.Count, LastObservedTime: event.Series.LastObservedTime,
	}})
	if err != nil {
		return nil, err
	}
	patched, err := s.Events.Events(event.Namespace).Patch(ctx, event.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, err
	}
	return FromCore(patched), nil
}

// ToCore is the core/v1 form of an events.k8s.io/v1 Event (the apiserver's own field mapping).
func ToCore(e *eventsv1.Event) *corev1.Event {
	out := &corev1.Event{
		ObjectMeta:          e.ObjectMeta,
		InvolvedObject:      e.Regarding,
		Related:             e.Related,
		Reason:              e.Reason,
		Message:             TruncatedNote(e.Note),
		Type:                e.Type,
		Action:              e.Action,
		EventTime:           e.EventTime,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
		Source:              e.DeprecatedSource,
		FirstTimestamp:      e.DeprecatedFirstTimestamp,
		LastTimestamp:       e.DeprecatedLastTimestamp,
		Count:               e.DeprecatedCount,
	}
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

// maxNoteBytes is the apiserver's limit on the message of an event with an eventTime (events.k8s.io/v1's
// note): a longer one refuses the whole event, which client-go's recorder would then drop.
const maxNoteBytes = 1024

// TruncatedNote cuts note to maxNoteBytes on a UTF-8 boundary, ending in "…" when cut.
func TruncatedNote(note string) string {
	if len(note) <= maxNoteBytes {
		return note
	}
	const ellipsis = "…"
	cut := maxNoteBytes - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + ellipsis
}

// FromCore is the events.k8s.io/v1 form of a core/v1 Event.
func FromCore(e *corev1.Event) *eventsv1.Event {
	out := &eventsv1.Event{
		ObjectMeta:               e.ObjectMeta,
		Regarding:                e.InvolvedObject,
		Related:                  e.Related,
		Reason:                   e.Reason,
		Note:                     e.Message,
		Type:                     e.Type,
		Action:                   e.Action,
		EventTime:                e.EventTime,
		ReportingController:      e.ReportingController,
		ReportingInstance:        e.ReportingInstance,
		DeprecatedSource:         e.Source,
		DeprecatedFirstTimestamp: e.FirstTimestamp,
		DeprecatedLastTimestamp:  e.LastTimestamp,
		DeprecatedCount:          e.Count,
	}
	if e.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}
