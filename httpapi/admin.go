package httpapi

import (
	"net/http"
	"strconv"

	"github.com/vulnd/vulnd/index"
)

// Admin returns the handler of the admin listener: GET /healthz answers
// 200 while the process runs; GET /readyz answers 200 while a snapshot is
// loaded and ready() is true (false while draining), else 503; GET
// /metrics is metrics, when not nil.
func Admin(current func() *index.Index, ready func() bool, metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, r, http.StatusOK, []byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if current() == nil || !ready() {
			writeJSON(w, r, http.StatusServiceUnavailable, []byte(`{"status":"not ready"}`))
			return
		}
		writeJSON(w, r, http.StatusOK, []byte(`{"status":"ready"}`))
	})
	if metrics != nil {
		mux.Handle("GET /metrics", metrics)
	}
	return mux
}

func writeJSON(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	hdr := w.Header()
	hdr["Content-Type"] = jsonType
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	hdr["Cache-Control"] = []string{"no-store"}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}
