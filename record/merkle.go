package record

import (
	"bytes"
	"crypto/sha256"
	"math/bits"
)

// The Merkle tree of a checkpoint is RFC 9162's (section 2.1): leaf hashes SHA-256(0x00 ||
// leaf), node hashes SHA-256(0x01 || left || right), a tree of n > 1 leaves split at the
// largest power of two less than n.

func leafHash(leaf []byte) []byte {
	h := sha256.New()
	h.Write([]byte{0})
	h.Write(leaf)
	return h.Sum(nil)
}

func nodeHash(left, right []byte) []byte {
	h := sha256.New()
	h.Write([]byte{1})
	h.Write(left)
	h.Write(right)
	return h.Sum(nil)
}

// split is k, the largest power of two less than n (n > 1).
func split(n int) int { return 1 << (bits.Len(uint(n-1)) - 1) }

// merkleRoot is MTH(D[n]) over leaf hashes; the hash of the empty string for none.
func merkleRoot(leaves [][]byte) []byte {
	switch len(leaves) {
	case 0:
		s := sha256.Sum256(nil)
		return s[:]
	case 1:
		return leaves[0]
	}
	k := split(len(leaves))
	return nodeHash(merkleRoot(leaves[:k]), merkleRoot(leaves[k:]))
}

// inclusionProof is PATH(m, D[n]): the audit path of leaf m over leaf hashes.
func inclusionProof(leaves [][]byte, m int) [][]byte {
	if len(leaves) <= 1 {
		return nil
	}
	k := split(len(leaves))
	if m < k {
		return append(inclusionProof(leaves[:k], m), merkleRoot(leaves[k:]))
	}
	return append(inclusionProof(leaves[k:], m-k), merkleRoot(leaves[:k]))
}

// verifyInclusion is RFC 9162's section 2.1.3.2: whether proof shows that the leaf of hash
// leaf is at index of a tree of size whose root is root.
func verifyInclusion(index, size int64, leaf []byte, proof [][]byte, root []byte) bool {
	if index < 0 || index >= size {
		return false
	}
	fn, sn := index, size-1
	r := leaf
	for _, p := range proof {
		if sn == 0 {
			return false
		}
		if fn&1 == 1 || fn == sn {
			r = nodeHash(p, r)
			for fn&1 == 0 && fn != 0 {
				fn >>= 1
				sn >>= 1
			}
		} else {
			r = nodeHash(r, p)
		}
		fn >>= 1
		sn >>= 1
	}
	return sn == 0 && bytes.Equal(r, root)
}
