package podwire

import "testing"

// The results are read by druid from the termination message of Jobs that an etcdbrctl of another
// version may have run: their JSON is fixed.
func TestJobResultsRoundTrip(t *testing.T) {
	msg, err := DataRevision{Revision: 42, Valid: true}.Encode()
	if err != nil || string(msg) != `{"revision":42,"valid":true}` {
		t.Fatalf("DataRevision encodes as %s (%v)", msg, err)
	}
	if r, err := ParseDataRevision(string(msg)); err != nil || r.Revision != 42 || !r.Valid {
		t.Errorf("ParseDataRevision(%s) = %+v, %v", msg, r, err)
	}
	if _, err := ParseDataRevision(`{"valid":false}`); err == nil {
		t.Error("a result without a revision is accepted")
	}
	if _, err := ParseDataRevision(`{"revision":0,"valid":true}`); err == nil {
		t.Error("valid data at revision 0 is accepted")
	}
	msg, err = PreservedData{Revision: 7, Snapshot: "Full-00000000-00000007-1.gz", Uploaded: true}.Encode()
	if err != nil || string(msg) != `{"revision":7,"snapshot":"Full-00000000-00000007-1.gz","uploaded":true}` {
		t.Fatalf("PreservedData encodes as %s (%v)", msg, err)
	}
	if _, err := ParsePreservedData(`{"revision":7}`); err == nil {
		t.Error("a result without a snapshot is accepted")
	}
}
