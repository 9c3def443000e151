package record

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"
)

func h(parts ...[]byte) []byte {
	s := sha256.Sum256(bytes.Join(parts, nil))
	return s[:]
}

// TestMerkleRootKnownAnswers writes RFC 9162's MTH out by hand for small trees.
func TestMerkleRootKnownAnswers(t *testing.T) {
	d := make([][]byte, 7)
	lh := make([][]byte, 7)
	for i := range d {
		d[i] = fmt.Appendf(nil, "leaf %d", i)
		lh[i] = h([]byte{0}, d[i])
	}
	n := func(l, r []byte) []byte { return h([]byte{1}, l, r) }
	empty := sha256.Sum256(nil)
	tests := []struct {
		size int
		want []byte
	}{
		{0, empty[:]},
		{1, lh[0]},
		{2, n(lh[0], lh[1])},
		{3, n(n(lh[0], lh[1]), lh[2])},
		{7, n(n(n(lh[0], lh[1]), n(lh[2], lh[3])), n(n(lh[4], lh[5]), lh[6]))},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.size), func(t *testing.T) {
			var leaves [][]byte
			for i := range tt.size {
				leaves = append(leaves, leafHash(d[i]))
			}
			if got := merkleRoot(leaves); !bytes.Equal(got, tt.want) {
				t.Fatalf("MTH of %d leaves = %x, want %x", tt.size, got, tt.want)
			}
		})
	}
	// The RFC's example tree of 7 leaves: PATH(3) = [a, g, l] (section 2.1.5).
	if got := inclusionProof(lh, 3); len(got) != 3 || !bytes.Equal(got[0], lh[2]) || !bytes.Equal(got[1], n(lh[0], lh[1])) ||
		!bytes.Equal(got[2], n(n(lh[4], lh[5]), lh[6])) {
		t.Fatalf("PATH(3, D[7]) is not [c, g, l]")
	}
	if got := inclusionProof(lh, 6); len(got) != 2 || !bytes.Equal(got[0], n(lh[4], lh[5])) ||
		!bytes.Equal(got[1], n(n(lh[0], lh[1]), n(lh[2], lh[3]))) {
		t.Fatalf("PATH(6, D[7]) is not [j, k]")
	}
}

// TestInclusionProofsVerify checks every leaf's proof of trees of 1 to 33 leaves, and that a
// proof fails for another leaf, index or root. (The size is not bound by the path alone,
// as in RFC 9162: the signed statement carries it.)
func TestInclusionProofsVerify(t *testing.T) {
	for size := 1; size <= 33; size++ {
		var leaves [][]byte
		for i := range size {
			leaves = append(leaves, leafHash(fmt.Appendf(nil, "%d", i)))
		}
		root := merkleRoot(leaves)
		for m := range size {
			p := inclusionProof(leaves, m)
			if !verifyInclusion(int64(m), int64(size), leaves[m], p, root) {
				t.Fatalf("size %d leaf %d: the proof does not verify", size, m)
			}
			other := leafHash([]byte("other"))
			if verifyInclusion(int64(m), int64(size), other, p, root) {
				t.Fatalf("size %d leaf %d: another leaf verifies", size, m)
			}
			if size > 1 && verifyInclusion(int64((m+1)%size), int64(size), leaves[m], p, root) {
				t.Fatalf("size %d leaf %d: verifies at another index", size, m)
			}
			if verifyInclusion(int64(m), int64(size), leaves[m], p, leafHash([]byte("root"))) {
				t.Fatalf("size %d leaf %d: verifies against another root", size, m)
			}
		}
		if verifyInclusion(int64(size), int64(size), leaves[0], nil, root) {
			t.Fatalf("an index past the end verifies")
		}
	}
}
