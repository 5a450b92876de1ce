package webhookcert

import (
	"net"
	"testing"
	"time"
)

func TestGenerateValid(t *testing.T) {
	now := time.Now()
	names := DNSNames("etcd-druid", "garden")
	b, err := Generate(names, []net.IP{net.ParseIP("127.0.0.1")}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Valid(names, now, 30*time.Minute) {
		t.Fatal("fresh bundle is not valid for its names")
	}
	if b.Valid(names, now, 2*time.Hour) {
		t.Fatal("bundle reported valid beyond its expiry")
	}
	if b.Valid([]string{"other.garden.svc"}, now, 0) {
		t.Fatal("bundle reported valid for a name it does not cover")
	}
	other, err := Generate(names, nil, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	mixed := &Bundle{CACert: other.CACert, Cert: b.Cert, Key: b.Key}
	if mixed.Valid(names, now, 0) {
		t.Fatal("certificate reported valid against a foreign CA")
	}
	if FromData(map[string][]byte{}).Valid(names, now, 0) {
		t.Fatal("empty bundle reported valid")
	}
}

// The caBundle sequence of a renewal: the current CA, then the old and the new one, then the new one once
// the old has expired.
func TestRenewalOverlapsUntilTheOldCAExpires(t *testing.T) {
	now := time.Now()
	names := DNSNames("etcd-druid", "garden")
	old, err := Generate(names, nil, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(old.CABundle(now)); got != string(old.CACert) {
		t.Fatalf("CABundle before a renewal = %q, want the CA alone", got)
	}
	at := now.Add(50 * time.Minute)
	next, err := Generate(names, nil, at, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	renewed := old.Renewed(next, at)
	if got, want := string(renewed.CABundle(at)), string(next.CACert)+string(old.CACert); got != want {
		t.Fatalf("CABundle after the renewal = %q, want the new and the old CA", got)
	}
	again := FromData(renewed.Data())
	if again.Pruned(at) != again {
		t.Errorf("Pruned dropped a CA that is still valid")
	}
	later := now.Add(2 * time.Hour)
	if got := string(again.CABundle(later)); got != string(next.CACert) {
		t.Errorf("CABundle after the old CA expired = %q, want the new CA alone", got)
	}
	if pruned := again.Pruned(later); len(pruned.PreviousCACerts) != 0 || pruned.Data()[DataKeyPreviousCAs] != nil {
		t.Errorf("Pruned kept the expired CA: %q", pruned.PreviousCACerts)
	}
}
