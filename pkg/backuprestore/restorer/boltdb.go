package restorer

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/server/v3/storage/backend"
)

// boltTx lets etcd's own schema helpers (lease records, compaction marks) read and write a bbolt
// transaction opened without etcd's backend. The backend would map the whole database with
// MAP_POPULATE, making all of it resident, and buffer every write a second time for its readers;
// the replay needs neither.
type boltTx struct{ tx *bolt.Tx }

var (
	_ backend.UnsafeReader = boltTx{}
	_ backend.UnsafeWriter = boltTx{}
)

// UnsafeRange reads key alone when endKey is nil, as the backend does, else [key, endKey) up to limit
// pairs (limit <= 0: all). The slices point into the transaction's pages.
func (t boltTx) UnsafeRange(bucket backend.Bucket, key, endKey []byte, limit int64) (keys [][]byte, vals [][]byte) {
	b := t.tx.Bucket(bucket.Name())
	if b == nil {
		return nil, nil
	}
	if len(endKey) == 0 {
		if v := b.Get(key); v != nil {
			return [][]byte{key}, [][]byte{v}
		}
		return nil, nil
	}
	c := b.Cursor()
	for k, v := c.Seek(key); k != nil && bytes.Compare(k, endKey) < 0; k, v = c.Next() {
		keys, vals = append(keys, k), append(vals, v)
		if limit > 0 && int64(len(keys)) >= limit {
			break
		}
	}
	return keys, vals
}

func (t boltTx) UnsafeForEach(bucket backend.Bucket, visitor func(k, v []byte) error) error {
	b := t.tx.Bucket(bucket.Name())
	if b == nil {
		return nil
	}
	return b.ForEach(visitor)
}

func (t boltTx) UnsafeCreateBucket(bucket backend.Bucket) {
	if _, err := t.tx.CreateBucketIfNotExists(bucket.Name()); err != nil {
		panic(err) // only in a read-only transaction, a programming error
	}
}

func (t boltTx) UnsafeDeleteBucket(bucket backend.Bucket) {
	_ = t.tx.DeleteBucket(bucket.Name())
}

func (t boltTx) UnsafePut(bucket backend.Bucket, key []byte, value []byte) {
	t.put(bucket, key, value, false)
}

func (t boltTx) UnsafeSeqPut(bucket backend.Bucket, key []byte, value []byte) {
	t.put(bucket, key, value, true)
}

func (t boltTx) UnsafeDelete(bucket backend.Bucket, key []byte) {
	if b := t.tx.Bucket(bucket.Name()); b != nil {
		_ = b.Delete(key)
	}
}

// put writes like the backend: a missing bucket or a failed write is a programming error there too.
func (t boltTx) put(bucket backend.Bucket, key, value []byte, seq bool) {
	b := t.tx.Bucket(bucket.Name())
	if b == nil {
		panic("bucket " + bucket.String() + " does not exist")
	}
	if seq {
		b.FillPercent = seqFillPercent
	}
	if err := b.Put(key, value); err != nil {
		panic(err)
	}
}

// seqFillPercent is how full the backend leaves pages of keys written in ascending order.
const seqFillPercent = 0.9
