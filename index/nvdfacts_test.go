package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// randomNVDRecords are n records with facts of every kind, drawn with a
// fixed seed: CWEs (some in lower case), tags, metrics of each version
// with and without vectors, KEV dates, flags, a few sources (one empty).
func randomNVDRecords(n int) []NVDRecord {
	r := rand.New(rand.NewPCG(7, 27))
	pick := func(from []string) string { return from[r.IntN(len(from))] }
	sevs := []string{"NONE", "LOW", "medium", "HIGH", "CRITICAL", ""}
	recs := make([]NVDRecord, n)
	for i := range recs {
		id := fmt.Sprintf("CVE-%d-%0*d", 1999+r.IntN(28), 4+r.IntN(2), i)
		pub := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(5000)) * time.Hour)
		f := NVDFacts{ID: id, Published: pub.Format(NVDTimestampLayout),
			LastModified: pub.Add(time.Duration(r.IntN(1e6)) * time.Millisecond).Format("2006-01-02T15:04:05.999999"),
			VulnStatus:   pick([]string{"Analyzed", "Rejected", "Awaiting Analysis", ""}),
			Source:       pick([]string{"nvd@nist.gov", "cve@mitre.org", "", "secalert@redhat.com"}),
			CertAlerts:   r.IntN(5) == 0, CertNotes: r.IntN(5) == 0, OVAL: r.IntN(5) == 0}
		for range r.IntN(3) {
			f.CWEs = append(f.CWEs, pick([]string{"CWE-79", "cwe-89", "NVD-CWE-Other", "NVD-CWE-noinfo", "CWE-20"}))
		}
		if r.IntN(10) == 0 {
			f.Tags = []string{pick([]string{"disputed", "unsupported-when-assigned"})}
		}
		for v, ms := range []*[]NVDMetric{&f.V2, &f.V3, &f.V4} {
			for range r.IntN(3) {
				*ms = append(*ms, NVDMetric{Severity: pick(sevs), Vector: pick([]string{"", fmt.Sprintf("CVSS:%d/AV:N/AC:%c", v+2, "LH"[r.IntN(2)])})})
			}
		}
		if r.IntN(8) == 0 {
			f.KEV = pub.AddDate(0, 0, r.IntN(400)).Format(time.DateOnly)
		}
		recs[i] = NVDRecord{Raw: []byte(`{"id":"` + id + `"}`), Facts: f}
	}
	return recs
}

// packNVDT packs recs with PackNVD and an encoder of its own.
func packNVDT(t testing.TB, recs []NVDRecord) *PackedNVD {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	p, err := PackNVD(recs, enc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// storedNVD packs recs and returns the store NewNVD makes of them, their
// stored facts and the blocks' frames.
func storedNVD(t *testing.T, recs []NVDRecord) (*NVD, *NVDStored, []byte) {
	t.Helper()
	p := packNVDT(t, recs)
	data := bytes.Join(p.Frames, nil)
	want, err := NewNVD(data, p.Blocks, p.Facts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := StoreNVD(p)
	if err != nil {
		t.Fatal(err)
	}
	return want, s, data
}

// loadStored loads lines (each without "\n") cut into pieces of at most
// per lines, parsed at once.
func loadStored(texts []string, lines [][]byte, per int, data []byte) (*NVD, error) {
	pieces := (len(lines) + per - 1) / per
	l, err := NewNVDLoader(texts, len(lines), pieces)
	if err != nil {
		return nil, err
	}
	errs := make([]error, pieces)
	var wg sync.WaitGroup
	for p := range pieces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b []byte
			for _, line := range lines[p*per : min((p+1)*per, len(lines))] {
				b = append(append(b, line...), '\n')
			}
			errs[p] = l.ParsePiece(p, p*per, b)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return l.NVD(data)
}

// TestNVDStoredLoadsAsBuilt: the stored facts (format 7), parsed in
// pieces at once, give the very store NewNVD makes from the facts
// (format 6): the same records, texts, sources, blocks and names; and
// every query answers the same.
func TestNVDStoredLoadsAsBuilt(t *testing.T) {
	recs := randomNVDRecords(1000)
	want, s, data := storedNVD(t, recs)
	lines := make([][]byte, s.Len())
	for i := range lines {
		lines[i] = s.AppendLine(nil, i)
	}
	for _, per := range []int{1, 7, 333, 1000} {
		got, err := loadStored(s.Texts(), lines, per, data)
		if err != nil {
			t.Fatalf("pieces of %d: %v", per, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pieces of %d: the loaded store differs from NewNVD's", per)
		}
	}
	// The same, its frames read from a file per request.
	l, err := NewNVDLoader(s.Texts(), len(lines), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.ParsePiece(0, 0, append(bytes.Join(lines, []byte("\n")), '\n')); err != nil {
		t.Fatal(err)
	}
	inFile, err := l.NVDFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if inFile.InMemory() || inFile.Size() != want.Size() {
		t.Errorf("from a file: in memory %v, size %d, want %d", inFile.InMemory(), inFile.Size(), want.Size())
	}
	for i := range want.Len() {
		a, errA := want.AppendRaw(nil, want.ID(i))
		b, errB := inFile.AppendRaw(nil, want.ID(i))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("record %d from a file: %q (%v), want %q (%v)", i+1, b, errB, a, errA)
		}
	}
	l, _ = NewNVDLoader(s.Texts(), len(lines), 1)
	l.ParsePiece(0, 0, append(bytes.Join(lines, []byte("\n")), '\n'))
	if _, err := l.NVDFile(bytes.NewReader(data), int64(len(data))+1); err == nil || !strings.Contains(err.Error(), "NVD blocks of") {
		t.Errorf("a file larger than the blocks: %v", err)
	}
	if !strings.HasPrefix(string(lines[0]), want.ID(0)+" ") {
		t.Errorf("line 1 %q does not start with its id %s", lines[0], want.ID(0))
	}
}

// TestNVDLoaderRefuses: a damaged line, text table or piece is an error
// naming the record, never a panic.
func TestNVDLoaderRefuses(t *testing.T) {
	recs := randomNVDRecords(40)
	_, s, data := storedNVD(t, recs)
	texts := s.Texts()
	lines := make([][]byte, s.Len())
	for i := range lines {
		lines[i] = s.AppendLine(nil, i)
	}
	src := -1
	for i, x := range texts {
		if x[0] == nvdKindSource {
			src = i
		}
	}
	other := 0
	for texts[other][0] == nvdKindSource {
		other++
	}
	line := func(i int, f func(fields []string) []string) [][]byte {
		out := make([][]byte, len(lines))
		copy(out, lines)
		out[i] = []byte(strings.Join(f(strings.Fields(string(lines[i]))), " "))
		return out
	}
	set := func(i, field int, v string) [][]byte {
		return line(i, func(f []string) []string { f[field] = v; return f })
	}
	for _, tc := range []struct {
		name  string
		lines [][]byte
		texts []string
		data  []byte
		want  string
	}{
		{"bad id", set(3, 0, "CVE-20x4-1"), nil, nil, "record 4: bad id"},
		{"lower-case id", set(3, 0, strings.ToLower(string(lines[3][:13]))), nil, nil, "record 4: bad id"},
		{"no facts", set(3, 0, "CVE-2024-0001"+string(lines[3][len(lines[3]):])), nil, nil, ""},
		{"missing number", line(5, func(f []string) []string { return f[:4] }), nil, nil, "record 6: missing number"},
		{"not a number", set(5, 2, "12a"), nil, nil, "record 6: bad number"},
		{"leading zero", set(5, 4, "01"), nil, nil, "record 6: bad number"},
		{"huge number", set(5, 1, "99999999999999999999"), nil, nil, "record 6: bad number"},
		{"flags out of range", set(5, 4, "16"), nil, nil, "record 6: number 16 out of range"},
		{"severities out of range", set(5, 5, "32768"), nil, nil, "out of range"},
		{"text out of range", set(5, 6, fmt.Sprint(len(texts))), nil, nil, "out of range"},
		{"source of another kind", set(5, 6, fmt.Sprint(other)), nil, nil, "is not a source"},
		{"text that is a source", line(5, func(f []string) []string { return append(f[:8], "1", fmt.Sprint(src)) }), nil, nil, "is a source"},
		{"more texts than said", line(5, func(f []string) []string { return append(f, fmt.Sprint(other)) }), nil, nil, "more than"},
		{"fewer texts than said", line(5, func(f []string) []string { f[8] = "3"; return f[:9] }), nil, nil, "missing number"},
		{"first record starts no block", set(0, 7, "0"), nil, nil, "record 1 starts no block"},
		{"frames do not add up", set(0, 7, "1"), nil, nil, "NVD blocks of"},
		{"out of order", line(1, func(f []string) []string { f[1] = "-5"; return f }), nil, nil, "is out of order"},
		{"twice", set(1, 0, string(lines[0][:bytes.IndexByte(lines[0], ' ')])), nil, nil, "twice"},
		{"empty text", lines, append(append([]string{}, texts...), ""), nil, "is empty"},
		{"text of no kind", lines, append(append([]string{}, texts...), "xCWE-1"), nil, "no known kind"},
		{"text twice", lines, append(append([]string{}, texts...), texts[0]), nil, "twice"},
		{"data too short", lines, nil, data[:len(data)-1], "NVD blocks of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			texts, d := texts, data
			if tc.texts != nil {
				texts = tc.texts
			}
			if tc.data != nil {
				d = tc.data
			}
			_, err := loadStored(texts, tc.lines, 16, d)
			if tc.want == "" {
				return // only: no panic
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error holding %q", err, tc.want)
			}
		})
	}
	l, _ := NewNVDLoader(texts, len(lines), 2)
	if err := l.ParsePiece(0, 0, []byte("CVE-2024-0001 1 1")); err == nil || !strings.Contains(err.Error(), "newline") {
		t.Errorf("a piece without its newline: %v", err)
	}
	if err := l.ParsePiece(0, 0, nil); err == nil {
		t.Error("a piece parsed twice: no error")
	}
	if _, err := l.NVD(data); err == nil || !strings.Contains(err.Error(), "not parsed") {
		t.Errorf("a piece not parsed: %v", err)
	}
}

// FuzzNVDLoader: a line of arbitrary bytes never panics the loader.
func FuzzNVDLoader(f *testing.F) {
	for _, s := range []string{"CVE-2024-0001 1 2 0 0 0 0 10 1 0", "CVE-2024-0001 -1 2 3 15 32767 0 0 0", "CVE-2024-0001", " ", "CVE-2024-0001 1 2 0 0 0 0 10 2 0 1 2 3"} {
		f.Add([]byte(s))
	}
	texts := []string{"cCWE-79", "snvd@nist.gov", "3CVSS:3.1/AV:N"}
	f.Fuzz(func(t *testing.T, line []byte) {
		l, err := NewNVDLoader(texts, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(line, '\n') >= 0 {
			return
		}
		if l.ParsePiece(0, 0, append(line, '\n')) == nil {
			l.NVD(make([]byte, 10))
		}
	})
}

// TestNVDLoaderAllocs: parsing stored facts allocates nothing per record
// (only the piece's growing list of texts).
func TestNVDLoaderAllocs(t *testing.T) {
	_, s, _ := storedNVD(t, randomNVDRecords(2000))
	var piece []byte
	for i := range s.Len() {
		piece = append(s.AppendLine(piece, i), '\n')
	}
	allocs := testing.AllocsPerRun(5, func() {
		l, err := NewNVDLoader(s.Texts(), s.Len(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.ParsePiece(0, 0, piece); err != nil {
			t.Fatal(err)
		}
	})
	// NewNVDLoader's tables and the map of texts, and the texts' list
	// growing: a few dozen, against 2,000 records.
	if allocs > 60 {
		t.Errorf("%.0f allocations to parse 2,000 records", allocs)
	}
}

// TestNVDStoredFactsStoreTheSame: the facts a store gives back of its
// records (StoredFacts), stored again, give the same text table and
// lines, alone or mixed with records' full facts (as an incremental
// build mixes carried records and records read again), though they keep
// only what the lines keep (times to the millisecond, severities and
// vectors apart, the status only as rejected or not).
func TestNVDStoredFactsStoreTheSame(t *testing.T) {
	recs := randomNVDRecords(1000)
	n, s, _ := storedNVD(t, recs)
	p := packNVDT(t, recs)
	lossy, first := 0, 0
	back := make([]NVDFacts, n.Len())
	for i := range back {
		var frame int
		back[i], frame = n.StoredFacts(i)
		want := 0
		if i == first {
			b := i / NVDBlockRecords
			want, first = p.Blocks[b].Size, first+p.Blocks[b].Records
		}
		if frame != want {
			t.Fatalf("record %d: frame %d, want %d", i+1, frame, want)
		}
		if !reflect.DeepEqual(back[i], p.Facts[i]) {
			lossy++
		}
	}
	if lossy < len(back)/2 {
		t.Errorf("only %d of %d records' facts differ from those stored: the test's records are too plain", lossy, len(back))
	}
	for _, mix := range []string{"all", "even", "odd"} {
		facts := make([]NVDFacts, len(back))
		for i := range facts {
			facts[i] = p.Facts[i]
			if mix == "all" || mix == "even" && i%2 == 0 || mix == "odd" && i%2 == 1 {
				facts[i] = back[i]
			}
		}
		s2, err := StoreNVD(&PackedNVD{Facts: facts, Blocks: p.Blocks})
		if err != nil {
			t.Fatalf("%s: %v", mix, err)
		}
		if !reflect.DeepEqual(s2.Texts(), s.Texts()) {
			t.Fatalf("%s: the text table differs", mix)
		}
		for i := range s.Len() {
			if a, b := s.AppendLine(nil, i), s2.AppendLine(nil, i); !bytes.Equal(a, b) {
				t.Fatalf("%s: line %d is %q, want %q", mix, i+1, b, a)
			}
		}
	}
}
