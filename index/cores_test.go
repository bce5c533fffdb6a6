package index

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestOnCores: every piece runs once, each error lands at its piece, each
// goroutine gets its own worker func, and no more goroutines start than
// there are pieces.
func TestOnCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, 3, 100} {
		runs := make([]atomic.Int32, n)
		var workers atomic.Int32
		errs := OnCores(n, func() func(int) error {
			workers.Add(1)
			var mine []int // the worker's own state
			return func(i int) error {
				mine = append(mine, i)
				runs[i].Add(1)
				if i%7 == 3 {
					return fmt.Errorf("piece %d", i)
				}
				return nil
			}
		})
		if len(errs) != n {
			t.Fatalf("n=%d: %d errors", n, len(errs))
		}
		for i := range runs {
			if got := runs[i].Load(); got != 1 {
				t.Errorf("n=%d: piece %d ran %d times", n, i, got)
			}
			if want := i%7 == 3; (errs[i] != nil) != want || want && errs[i].Error() != fmt.Sprintf("piece %d", i) {
				t.Errorf("n=%d: piece %d: error %v", n, i, errs[i])
			}
		}
		if w := workers.Load(); w > int32(min(4, n)) {
			t.Errorf("n=%d: %d workers, want at most %d", n, w, min(4, n))
		}
		want := error(nil)
		if n > 3 {
			want = errs[3]
		}
		if got := FirstError(errs); !errors.Is(got, want) && got != want {
			t.Errorf("n=%d: FirstError %v, want %v", n, got, want)
		}
	}
}
