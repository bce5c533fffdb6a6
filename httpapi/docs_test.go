package httpapi

import (
	"bytes"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/vulnd/vulnd/loader"
)

// TestAPIDocExamples runs every curl example of docs/API.md against the
// bundled demo, which the doc says they run on: each answers 200 with
// something in it (a list that is not empty, a batch that found every
// name).
func TestAPIDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	ix, _, err := loader.Load("../snapshots/demo")
	if err != nil {
		t.Fatalf("the demo snapshot does not load (make demo rebuilds it): %v", err)
	}
	srv := newTestServer(t, ix)
	re := regexp.MustCompile(`(?m)^curl -s '?localhost:8080([^'\s]+)'?(?: -d '([^']*)')?`)
	found := re.FindAllSubmatch(doc, -1)
	if len(found) < 20 {
		t.Fatalf("found %d curl examples in docs/API.md, want at least 20", len(found))
	}
	for _, m := range found {
		target, body := string(m[1]), m[2]
		method := http.MethodGet
		if body != nil {
			method = http.MethodPost
		}
		req, err := http.NewRequest(method, srv.URL+target, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, res)
		switch {
		case res.StatusCode != 200:
			t.Errorf("%s %s: %d %s", method, target, res.StatusCode, got)
		case bytes.Equal(got, []byte("[]")) || len(got) == 0:
			t.Errorf("%s %s: an empty answer; pick an example the demo has", method, target)
		case strings.HasPrefix(target, "/cve/batch") && !bytes.Contains(got, []byte(`"missing":[]`)):
			t.Errorf("%s %s: names missing from the demo: %s", method, target, got)
		}
	}
}
