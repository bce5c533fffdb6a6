package index

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestHistoryChangeID(t *testing.T) {
	for id, want := range map[int64]string{
		0:           "00000000-0000-8000-8000-000000000000",
		42:          "00000000-0000-8000-8000-00000000002A",
		1<<48 + 5:   "00000000-0001-8000-8000-000000000005",
		1<<63 - 1:   "00000000-7FFF-8000-8000-FFFFFFFFFFFF",
		-1:          "00000000-FFFF-8000-8000-FFFFFFFFFFFF",
		0xABCDEF012: "00000000-0000-8000-8000-000ABCDEF012",
	} {
		if got := HistoryChangeID(id); got != want {
			t.Errorf("HistoryChangeID(%d) = %s, want %s", id, got, want)
		}
	}
}

// TestHistoryDescriptions: a new CVE's description is the old summary of
// its next "Summary changed", else its summary now; a CVE that was new,
// went missing and came back new has no known first description, and one
// missing from the snapshot none.
func TestHistoryDescriptions(t *testing.T) {
	ev := func(typ, details string) Event { return Event{Type: typ, Details: json.RawMessage(details)} }
	rep := func(id, at string, alerts ...Alert) Report {
		for i := range alerts {
			alerts[i].CreatedAt = at
			for k := range alerts[i].Events {
				alerts[i].Events[k].CreatedAt = at
			}
		}
		return Report{ID: id, CreatedAt: at, Alerts: alerts}
	}
	d := &Data{
		CVEs: []CVE{{Name: "CVE-2024-0001", Summary: "three", CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-01 00:00:00Z"}},
		Reports: []Report{
			rep("r1", "2024-01-01 00:00:00Z", Alert{ID: 1, CVE: "CVE-2024-0001", Events: []Event{ev(EventNewCVE, `{}`)}},
				Alert{ID: 2, CVE: "CVE-2024-0009", Events: []Event{ev(EventNewCVE, `{}`)}}),
			rep("r2", "2024-01-02 00:00:00Z", Alert{ID: 3, CVE: "CVE-2024-0001", Events: []Event{ev(EventNewCVE, `{}`)}}),
			rep("r3", "2024-01-03 00:00:00Z", Alert{ID: 4, CVE: "CVE-2024-0001", Events: []Event{ev(EventSummaryChanged, `{"old":"two","new":"three"}`)}}),
			rep("r4", "2024-01-04 00:00:00Z", Alert{ID: 5, CVE: "CVE-2024-0001", Events: []Event{ev(EventNewCVE, `{}`)}}),
		},
	}
	ix, err := Build(d, Meta{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ix.AppendHistoryPage(nil, ix.SearchHistory(&HistoryQuery{Event: HistoryReceived}), 0, 10, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		CVEChanges []struct {
			Change struct {
				CVEID   string `json:"cveId"`
				Details []struct {
					NewValue string `json:"newValue"`
				} `json:"details"`
			} `json:"change"`
		} `json:"cveChanges"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	var got []string
	for _, c := range page.CVEChanges {
		var vals []string
		for _, d := range c.Change.Details {
			vals = append(vals, d.NewValue)
		}
		got = append(got, c.Change.CVEID+":"+strings.Join(vals, ","))
	}
	want := []string{"CVE-2024-0001:", "CVE-2024-0009:", "CVE-2024-0001:two", "CVE-2024-0001:three"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("new changes and their descriptions: %q, want %q", got, want)
	}
}

// benchHistory is an index whose reports hold n alerts of the kinds a
// daily build makes: a new CVE with what it has, and changes.
func benchHistory(b *testing.B, n int) *Index {
	b.Helper()
	var cves []CVE
	var alerts []Alert
	const at = "2024-01-02 00:00:00Z"
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("CVE-2024-%04d", i+1)
		cves = append(cves, CVE{Name: name, Summary: "A summary of some length, as NVD writes them, " + name, CreatedAt: at, UpdatedAt: at})
		a := Alert{ID: int64(i + 1), CVE: name, CreatedAt: at}
		if i%2 == 0 {
			a.Events = append(a.Events, Event{Type: EventNewCVE, Details: json.RawMessage(`{}`)})
		} else {
			a.Events = append(a.Events, Event{Type: EventSummaryChanged, Details: json.RawMessage(`{"old":"An older summary","new":"A summary"}`)})
		}
		a.Events = append(a.Events,
			Event{Type: EventCPEsChanged, Details: json.RawMessage(`{"added":[{"cpe_id":1,"product":"widget","uri":"cpe:2.3:a:acme:widget:2.0:*:*:*:*:*:*:*","vendor":"acme","version":"2.0"}],"removed":[]}`)},
			Event{Type: EventCVSSChanged, Details: json.RawMessage(`{"action":"added","id":1,"new_score":"9.8","old_score":""}`)},
			Event{Type: EventCWEsChanged, Details: json.RawMessage(`{"added":["CWE-79"],"removed":[]}`)},
			Event{Type: EventReferencesChanged, Details: json.RawMessage(`{"added":[{"description":"Patch","link":"https://example.org/patch","source":"cna@example.org","type":"PATCH"}],"changed":[],"removed":[]}`)})
		for k := range a.Events {
			a.Events[k].CreatedAt = at
		}
		alerts = append(alerts, a)
	}
	ix, err := Build(&Data{CVEs: cves, Reports: []Report{{ID: "r", CreatedAt: at, Alerts: alerts}}}, Meta{ID: "b"})
	if err != nil {
		b.Fatal(err)
	}
	return ix
}

// BenchmarkHistoryPage is a full page of NVD's history (5,000 changes,
// each of five events), and one CVE's history.
func BenchmarkHistoryPage(b *testing.B) {
	ix := benchHistory(b, 5000)
	var buf []byte
	b.Run("page5000", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var err error
			buf, err = ix.AppendHistoryPage(buf[:0], ix.SearchHistory(&HistoryQuery{}), 0, 5000, time.Time{})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("cveId", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var err error
			buf, err = ix.AppendHistoryPage(buf[:0], ix.SearchHistory(&HistoryQuery{CVEID: "CVE-2024-2501"}), 0, 5000, time.Time{})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
