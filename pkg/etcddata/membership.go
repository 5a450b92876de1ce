package etcddata

import (
	"encoding/json"
	"slices"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// KnownPeerURLs are the peer URLs of the members the data directory's membership knows: those of the
// database's membership and those the WAL's membership changes name after it (entries etcd replays when
// it starts). known is false when the database holds no membership to go by; then nothing is known about
// who the member will talk to. These are the members a member with data talks to when it starts: etcd
// ignores the initial cluster of its configuration then, which during a scale-up also names members whose
// pods do not exist yet.
func KnownPeerURLs(dataDir string) (urls []string, known bool, err error) {
	db, err := ReadDB(DBPath(dataDir))
	if err != nil {
		return nil, false, err
	}
	if len(db.MemberPeerURLs) == 0 {
		return nil, false, nil
	}
	w, err := ReadWAL(WALDir(dataDir))
	if err != nil {
		return nil, false, err
	}
	urls = append(slices.Clone(db.MemberPeerURLs), w.ConfChangePeerURLs...)
	slices.Sort(urls)
	return slices.Compact(urls), true, nil
}

// memberPeerURLs are the peer URLs of a member as etcd stores it (JSON, in the database's members bucket
// and in a membership change's context); none when it does not parse.
func memberPeerURLs(data []byte) []string {
	var m struct {
		PeerURLs []string `json:"peerURLs"`
	}
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	return m.PeerURLs
}

// confChangePeerURLs are the peer URLs a WAL entry of type EntryConfChange names: the member added or
// updated (none for a removal).
func confChangePeerURLs(data []byte) []string {
	var cc raftpb.ConfChange
	if proto.Unmarshal(data, &cc) != nil || cc.GetType() == raftpb.ConfChangeType_ConfChangeRemoveNode {
		return nil
	}
	return memberPeerURLs(cc.GetContext())
}
