package loader

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// FuzzDecodeEPSS feeds arbitrary files to decodeEPSS: it must never
// panic, every error is one line naming the input and a line, and what it
// accepts is a well-formed table that writes back to a file read the
// same.
func FuzzDecodeEPSS(f *testing.F) {
	const head = "#model_version:v2026.06.15,score_date:2026-09-29T12:00:22Z\ncve,epss,percentile\n"
	// The real file's shape: its comment, its header, rows sorted as
	// strings with five decimals or fewer.
	f.Add([]byte(head + "CVE-1999-0095,0.16317,0.96858\nCVE-2023-1234,0.00707,0.5157\nCVE-2023-20116,0.00604,0.46813\n"))
	if raw, err := os.ReadFile(realEPSS); err == nil {
		f.Add(raw)
	}
	f.Add([]byte(strings.ReplaceAll(head+"CVE-2023-10000,1.0,1\nCVE-2023-9999,4e-05,0\n", "\n", "\r\n")))
	f.Add([]byte(head + "CVE-2023-9999,0.5,0.9\nCVE-2023-1234,0.1,0.2\nCVE-2023-9999,0.5,0.9"))
	f.Add([]byte(head + "CVE-2023-1234,1.3,0.2\n"))
	f.Add([]byte(head + "CVE-2023-1234,0.1\n\n"))
	f.Add([]byte("\ufeff#score_date:2022-05-03T00:00:00+0000,model_version:v2022.01.01\ncve,epss,percentile\nCVE-2022-0001,0.000970000,0.381260000\n"))
	f.Add([]byte("cve,epss,percentile\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := decodeEPSS(bytes.NewReader(data), "epss fuzz")
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "loader: epss fuzz: line ") || strings.Contains(msg, "\n") {
				t.Errorf("error %q is not one line naming the input and a line", msg)
			}
			return
		}
		if e.Len() == 0 || !validEPSSModel(e.Model) || e.Date.IsZero() {
			t.Errorf("accepted %d rows, model %q, date %v", e.Len(), e.Model, e.Date)
		}
		var b strings.Builder
		b.WriteString("#model_version:" + e.Model + ",score_date:" + e.Date.Format("2006-01-02T15:04:05.999999999Z07:00") + "\n" + epssHeader + "\n")
		prev := ""
		for name, s := range e.All() {
			if prev != "" && name <= prev {
				t.Errorf("%s after %s", name, prev)
			}
			prev = name
			if s.Score > EPSSScale || s.Percentile > EPSSScale {
				t.Errorf("%s: %v out of [0,1]", name, s)
			}
			if got, ok := e.Lookup(name); !ok || got != s {
				t.Errorf("Lookup(%s) = %v, %v; want %v", name, got, ok, s)
			}
			b.WriteString(name + "," + s.Score.String() + "," + s.Percentile.String() + "\n")
		}
		again, err := decodeEPSS(strings.NewReader(b.String()), "epss again")
		if err != nil {
			t.Fatalf("written back: %v", err)
		}
		if again.Model != e.Model || !again.Date.Equal(e.Date) || !slicesEqualRows(again.rows, e.rows) {
			t.Errorf("written back, read differently")
		}
	})
}

func slicesEqualRows(a, b []epssRow) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
