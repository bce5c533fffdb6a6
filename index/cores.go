package index

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// OnCores runs a job of n pieces on every core: the pieces 0..n-1, each
// once, on as many goroutines as GOMAXPROCS (at most n), taking the next
// piece as each finishes one. Each goroutine calls worker once and runs
// its pieces with the func it gives, so that func may keep buffers from
// one piece to the next. It returns each piece's error, by piece.
func OnCores(n int, worker func() func(piece int) error) []error {
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			do := worker()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				errs[i] = do(i)
			}
		}()
	}
	wg.Wait()
	return errs
}

// FirstError is the error of the first piece that failed, or nil.
func FirstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
