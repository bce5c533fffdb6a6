package index

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAffectedPack checks that pack keeps every table: keys and bounds
// alone or together, empty star lists, no spans or no odd spans.
func TestAffectedPack(t *testing.T) {
	tests := []affectedTables{
		{unbounded: []int32{1, 4}},
		{keys: []string{"1.0"}, eq: [][]int32{{3}}, star: [][]int32{nil}},
		{keys: []string{"1.0", "2.0-beta9", "10"}, eq: [][]int32{{0, 2}, {2}, {1, 5, 9}}, star: [][]int32{{2}, nil, {5, 9}}},
		{bounds: []string{"2.0"}, spans: []span{{0, 2, 7}}},
		{bounds: []string{"1", "11.5(1)"}, odd: []oddSpan{{[2]int32{1, 0}, [2]int32{4, noEnd}, 3}}},
		{
			keys: []string{"0.9", "3"}, eq: [][]int32{{1}, {2, 3}}, star: [][]int32{{1}, {3}},
			unbounded: []int32{0},
			bounds:    []string{"1.0", "2.0", "3.0"},
			spans:     []span{{1, 4, 2}, {0, noEnd, 6}},
			odd:       []oddSpan{{[2]int32{1, 3}, [2]int32{6, noEnd}, 8}},
		},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			a := tt.pack()
			got := affectedTables{unbounded: a.unbounded(), spans: a.spans(), odd: a.odd()}
			for k := range int(a.nKeys) {
				got.keys = append(got.keys, a.text(k))
				got.eq, got.star = append(got.eq, a.eq(k)), append(got.star, a.star(k))
			}
			for k := range int(a.nBounds) {
				got.bounds = append(got.bounds, a.text(int(a.nKeys)+k))
			}
			if diff := cmp.Diff(tt, got, cmp.AllowUnexported(affectedTables{}, span{}, oddSpan{}), cmpEmpty); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			for k := range int(a.nKeys) {
				if i, ok := a.find(tt.keys[k]); !ok || i != k {
					t.Errorf("find(%q) = %d, %v; want %d, true", tt.keys[k], i, ok, k)
				}
			}
			for k, b := range tt.bounds {
				if r := a.rank(b); r != int32(2*k+1) {
					t.Errorf("rank(%q) = %d, want %d", b, r, 2*k+1)
				}
			}
		})
	}
}

// text returns text i of a: keys are texts 0 to nKeys-1, the bounds
// the ones after.
func (a *affected) text(i int) string {
	end := func(i int) int32 { // in ints
		if i < int(a.nKeys) {
			return a.ints[i]
		}
		return a.ints[2*int(a.nKeys)+i]
	}
	var from int32
	if i > 0 {
		from = end(i - 1)
	}
	return a.texts[from:end(i)]
}

// cmpEmpty makes nil and empty slices equal.
var cmpEmpty = cmp.FilterValues(func(x, y any) bool {
	return isEmptySlice(x) && isEmptySlice(y)
}, cmp.Comparer(func(_, _ any) bool { return true }))

func isEmptySlice(v any) bool {
	switch s := v.(type) {
	case []int32:
		return len(s) == 0
	case []string:
		return len(s) == 0
	case []span:
		return len(s) == 0
	case []oddSpan:
		return len(s) == 0
	case [][]int32:
		return len(s) == 0
	}
	return false
}
