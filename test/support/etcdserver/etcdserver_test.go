package etcdserver

import (
	"net"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestSingleMemberServesAndReleasesItsPort(t *testing.T) {
	c := Start(t)
	cli := c.Client(t)
	if _, err := cli.Put(t.Context(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(t.Context(), "k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("get = %v, %v", resp, err)
	}
	m := c.Members[0]
	m.Stop()
	m.Stop() // idempotent
	l, err := net.Listen("tcp", m.Config.ClientURL.Host)
	if err != nil {
		t.Fatalf("client port still bound after Stop: %v", err)
	}
	_ = l.Close()
}

func TestThreeMemberClusterReplicatesAndSurvivesLeaderLoss(t *testing.T) {
	c := StartCluster(t, 3, nil)
	cli := c.Client(t)
	if _, err := cli.Put(t.Context(), "k", "v1"); err != nil {
		t.Fatal(err)
	}
	leader := c.Leader()
	if leader == nil {
		t.Fatal("no leader")
	}
	leader.Stop()
	// A follower's client must see the write and accept new ones once a new leader is elected.
	var follower *Member
	for _, m := range c.Members {
		if m != leader {
			follower = m
			break
		}
	}
	fcli := follower.Client(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := fcli.Put(t.Context(), "k", "v2", clientv3.WithPrevKV())
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write accepted after the leader stopped: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp, err := fcli.Get(t.Context(), "k")
	if err != nil || string(resp.Kvs[0].Value) != "v2" || resp.Kvs[0].Version != 2 {
		t.Fatalf("get = %v, %v", resp, err)
	}
	if len(c.Endpoints()) != 2 {
		t.Fatalf("endpoints = %v, want the two running members", c.Endpoints())
	}
}
