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
