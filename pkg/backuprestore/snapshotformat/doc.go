// Package snapshotformat reads and writes the contents of backup objects and proves their integrity:
//
//   - a delta snapshot is a JSON array of {"etcdEvent": <mvccpb.Event>, "time": <RFC3339>} followed by
//     the 32-byte sha256 of that JSON;
//   - a full snapshot is etcd's Maintenance.Snapshot stream: a bbolt database followed by the 32-byte
//     sha256 of the database.
//
// Both trailers are checked before anything is applied, so a flipped byte in the store can never turn
// into a silently wrong restore. Compression is outside this package (see package snapshot): these
// formats are what is inside the codec.
package snapshotformat
