package loader

import (
	"bytes"
	"testing"

	"github.com/goccy/go-json"
)

// TestParseStamp: parseStamp gives what decoding the body whole gives,
// for every CVE of the demo snapshot and for bodies whose first members
// are not as EncodeCVE writes them (it falls back to decoding them).
func TestParseStamp(t *testing.T) {
	o, err := openSnapshot("../snapshots/demo", false)
	if err != nil {
		t.Fatal(err)
	}
	// eachRecord calls f from a goroutine per chunk (the demo's bodies
	// are in two chunks since format 10), each line in buffers that are
	// its own once f returns: a copy, by record number.
	lines := make([][]byte, o.m.Files[keyCVEs].Records)
	if err := eachRecord("../snapshots/demo", o.m.Files[keyCVEs], o.dec, func(n int, line []byte) error {
		lines[n] = bytes.Clone(line)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`{"name":"CVE-2024-0001","summary":"a \"quoted\" word and a backslash \\","created_at":"2024-01-01 00:00:00Z","updated_at":"2024-02-01 00:00:00Z","cpes":[]}`,
		`{"name":"CVE-2024-0002","summary":"\u00e9t\u00e9","created_at":"2024-01-01 00:00:00Z","updated_at":"2024-02-01 00:00:00Z"}`,
		`{"name":"CVE-2024-\u0030003","summary":"","created_at":"2024-01-01 00:00:00Z","updated_at":"2024-02-01 00:00:00Z"}`,
		`{"summary":"x","name":"CVE-2024-0004","created_at":"2024-01-01 00:00:00Z","updated_at":"2024-02-01 00:00:00Z"}`,
		`{"name":"CVE-2024-0005","summary":"x","updated_at":"2024-02-01 00:00:00Z"}`,
		`{"name":"CVE-2024-0006"}`,
	} {
		lines = append(lines, []byte(s))
	}
	for _, line := range lines {
		var want, got Stamp
		wantErr := json.Unmarshal(line, &want)
		gotErr := parseStamp(line, &got)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("parseStamp(%.120s) = %+v, %v; decoding it whole gives %+v, %v", line, got, gotErr, want, wantErr)
		}
	}
	if len(lines) < 2000 {
		t.Errorf("read %d bodies, want the demo's 2,003 and more", len(lines))
	}
}
