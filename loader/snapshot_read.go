package loader

// Reading a snapshot: Load (for serving), Validate and Read (whole, for a
// build with -previous).

import (
	"bytes"
	"fmt"
	"sync"
	"time"

	"github.com/goccy/go-json"
	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

// Load reads the snapshot in dir and builds its index: the CVE bodies are
// decoded in parallel into one buffer and served from it; the files
// serving does not need (metrics, ids, nvdfrom) are checked against their
// chunks' sums only (as every file is: the whole-file sums are validate's).
// Any problem is an error naming the file; nothing partial is
// returned.
func Load(dir string) (*index.Index, Manifest, error) {
	start := time.Now()
	o, err := openSnapshot(dir, false)
	if err != nil {
		return nil, Manifest{}, err
	}
	m, id, dec, wrap := o.m, o.id, o.dec, o.wrap
	// NVD's records are read beside the rest: their sums and facts keep
	// cores busy while the other files' single-threaded parts run.
	var (
		nvd    *index.NVD
		nvdErr error
		nvdWG  sync.WaitGroup
	)
	nvdWG.Add(1)
	go func() {
		defer nvdWG.Done()
		nvd, nvdErr = loadNVD(dir, m, dec)
	}()
	defer nvdWG.Wait() // an early error return still waits for it
	cwes, err := decodeRecords[index.CWE](dir, m.Files[keyCWEs], dec)
	if err != nil {
		return nil, Manifest{}, wrap(keyCWEs, err)
	}
	lay, err := readCVEsLayout(dir, m, dec)
	if err != nil {
		return nil, Manifest{}, fmt.Errorf("loader: snapshot %s: %w", dir, err)
	}
	entries, err := decodeEntries(dir, m.Files[keyCVEs], lay, dec)
	if err != nil {
		return nil, Manifest{}, wrap(keyCVEs, err)
	}
	reports, err := decodeRecords[index.Report](dir, m.Files[keyReports], dec)
	if err != nil {
		return nil, Manifest{}, wrap(keyReports, err)
	}
	details, err := decodeDetails(dir, m, lay.cves, dec, true)
	if err != nil {
		return nil, Manifest{}, err
	}
	epss, err := decodeEPSSFile(dir, m, dec)
	if err != nil {
		return nil, Manifest{}, err
	}
	for _, key := range []string{keyMetrics, keyIDs, keyNVDFrom} {
		if key == keyNVDFrom && m.Version < 8 {
			continue
		}
		if err := verifyChunks(dir, m.Files[key], false); err != nil {
			return nil, Manifest{}, wrap(key, err)
		}
	}
	nvdWG.Wait()
	if nvdErr != nil {
		return nil, Manifest{}, nvdErr
	}
	ix, err := buildIndex(dir, m, id, start, cwes, entries, details, reports, epss, true)
	if err != nil {
		return nil, Manifest{}, err
	}
	ix.SetNVD(nvd)
	return ix, m, nil
}

// buildIndex builds a snapshot's index and checks its counts against the
// manifest's. deferVendors (a load for serving) leaves the vendor and
// product tables to their first use or serve's warm-up (see
// index.BuildEntriesDeferVendors: a fifth of a load on one core), which
// check their counts against the manifest's then (index.WarmVendors);
// the other counts are checked here.
func buildIndex(dir string, m Manifest, id string, start time.Time, cwes []index.CWE, entries []index.CVEEntry, details *index.Details, reports []index.Report, epss *EPSS, deferVendors bool) (*index.Index, error) {
	meta := index.Meta{ID: id, BuiltAt: m.BuiltAt, Format: m.Version, LoadStarted: start, InputDates: m.inputDates(), EPSS: epss.source()}
	meta.Artifact, _ = ReadArtifact(dir)
	for _, in := range m.Inputs {
		meta.Inputs = append(meta.Inputs, index.Input{Name: in.Name, Size: in.Size, SHA256: in.SHA256})
	}
	build := index.BuildEntries
	if deferVendors {
		build = index.BuildEntriesDeferVendors
	}
	ix, err := build(cwes, entries, details, reports, meta)
	if err != nil {
		return nil, fmt.Errorf("loader: snapshot %s: %w", dir, err)
	}
	if deferVendors {
		ix.ExpectVendors(m.Counts.Vendors, m.Counts.Products)
		if got, want := ix.CountsDeferred(), m.Counts; got != want.WithoutVendors() {
			return nil, fmt.Errorf("loader: snapshot %s: manifest counts %+v, data holds %+v (vendors and products not counted yet)", dir, want, got)
		}
		return ix, nil
	}
	if got, want := ix.Counts(), m.Counts; got != want {
		return nil, fmt.Errorf("loader: snapshot %s: manifest counts %+v, data holds %+v", dir, want, got)
	}
	return ix, nil
}

// Validate checks the snapshot in dir as Load does (format version, sizes,
// checksums, decodability, counts and the index's own consistency checks)
// and more: it decodes every file, checks every CVE body is exactly what
// this vulnd would serve for its record, and checks the whole-file sums.
func Validate(dir string) (Manifest, error) {
	s, bodies, err := read(dir, false)
	if err != nil {
		return Manifest{}, err
	}
	entries := make([]index.CVEEntry, len(bodies))
	for i, b := range bodies {
		c := &s.Data.CVEs[i]
		if !bytes.Equal(index.EncodeCVE(c), b) {
			return Manifest{}, fmt.Errorf("loader: snapshot %s: %s: record %d (%s) is not the body this vulnd serves for it",
				dir, fileCVEs, i+1, c.Name)
		}
		if entries[i], err = index.ScanCVE(b); err != nil {
			return Manifest{}, fmt.Errorf("loader: snapshot %s: %s: record %d: %w", dir, fileCVEs, i+1, err)
		}
	}
	dec, err := decoder()
	if err != nil {
		return Manifest{}, fmt.Errorf("loader: zstd: %w", err)
	}
	if err := validateNVD(dir, s.Manifest, dec); err != nil {
		return Manifest{}, err
	}
	if s.Manifest.Version >= cve5FromVersion {
		if _, err := readRecordFrom(dir, s.Manifest, len(s.Data.CVEs), dec); err != nil {
			return Manifest{}, fmt.Errorf("loader: snapshot %s: %w", dir, err)
		}
	}
	if err := s.details.Check(); err != nil {
		return Manifest{}, fmt.Errorf("loader: snapshot %s: %s: %w", dir, fileDetails, err)
	}
	if _, err := buildIndex(dir, s.Manifest, s.ID, time.Time{}, s.Data.CWEs, entries, s.details, s.Data.Reports, s.epss, false); err != nil {
		return Manifest{}, err
	}
	for _, key := range sortedKeys(s.Manifest.dataFiles()) {
		if err := verifyFile(dir, s.Manifest.Files[key]); err != nil {
			return Manifest{}, fmt.Errorf("loader: snapshot %s: %s: %w", dir, s.Manifest.Files[key].Name, err)
		}
	}
	return s.Manifest, nil
}

// Read reads and checks every file of the snapshot in dir and decodes
// every record, id tables included, without building an index; a build
// with -previous uses it. It also reads a snapshot of the previous format
// version, so that an upgrade keeps the reports and ids.
func Read(dir string) (*Snapshot, error) {
	s, _, err := read(dir, true)
	return s, err
}

// read is Read, also returning the stored CVE bodies (in Data.CVEs order);
// old allows the previous format version.
func read(dir string, old bool) (*Snapshot, [][]byte, error) {
	return readSnapshot(dir, old, false)
}

// readPrevious is Read for a build with -previous, whose unchanged CVEs
// are carried over as the bytes of their bodies: each CVE of Data.CVEs
// has only its name, dates and metrics (with their ids); the bodies are
// kept as stored (Snapshot.bodies) and decoded only for the CVEs the
// build asks for (see Snapshot.decodeCVE). At 400k CVEs, decoding every
// body was most of reading the previous snapshot (7.6 of 9.4 s).
func readPrevious(dir string) (*Snapshot, error) {
	s, _, err := readSnapshot(dir, true, true)
	return s, err
}

// readSnapshot is read, with light: the CVEs' bodies are kept as stored,
// not decoded (see readPrevious).
func readSnapshot(dir string, old, light bool) (*Snapshot, [][]byte, error) {
	o, err := openSnapshot(dir, old)
	if err != nil {
		return nil, nil, err
	}
	m, id, dec, wrap := o.m, o.id, o.dec, o.wrap
	s := &Snapshot{Dir: dir, Manifest: m, ID: id, Data: &index.Data{}, ids: newIDTables()}
	d := s.Data
	if d.CWEs, err = decodeRecords[index.CWE](dir, m.Files[keyCWEs], dec); err != nil {
		return nil, nil, wrap(keyCWEs, err)
	}
	fi := m.Files[keyCVEs]
	if s.cvesLayout, err = readCVEsLayout(dir, m, dec); err != nil {
		return nil, nil, fmt.Errorf("loader: snapshot %s: %w", dir, err)
	}
	owners := s.cvesLayout.owners
	// A build's read (light, of its own format) takes the id tables as
	// stored (see readCarriedIDs): a second of one goroutine's work at
	// 400k (the CPE table's map), done while the bodies are decoded.
	var (
		carried    *carriedIDs
		carriedErr error
		idsRead    chan struct{}
	)
	if light && m.Version == writeVersion {
		idsRead = make(chan struct{})
		go func() {
			defer close(idsRead)
			carried, carriedErr = readCarriedIDs(dir, m.Files[keyIDs], dec, s.ids)
		}()
	}
	waitIDs := func() {
		if idsRead != nil {
			<-idsRead
			idsRead = nil
		}
	}
	defer waitIDs() // on an error return, nothing is left running
	bodies := make([][]byte, s.cvesLayout.cves)
	d.CVEs = make([]index.CVE, s.cvesLayout.cves)
	s.bodyHash = make([]recHash, s.cvesLayout.cves)
	if err := eachRecord(dir, fi, dec, func(n int, line []byte) error {
		p := owners[n]
		if p < 0 {
			return nil // a dead line
		}
		bodies[p], s.bodyHash[p] = line, recordHash(line)
		if light {
			return bodyStamp(line, &d.CVEs[p])
		}
		return json.Unmarshal(line, &d.CVEs[p])
	}); err != nil {
		return nil, nil, wrap(keyCVEs, err)
	}
	metrics, err := decodeRecords[metricsRecord](dir, m.Files[keyMetrics], dec)
	if err != nil {
		return nil, nil, wrap(keyMetrics, err)
	}
	if err := joinMetrics(d.CVEs, metrics); err != nil {
		return nil, nil, wrap(keyMetrics, err)
	}
	if d.Reports, err = decodeRecords[index.Report](dir, m.Files[keyReports], dec); err != nil {
		return nil, nil, wrap(keyReports, err)
	}
	if light && m.Version == writeVersion {
		// The tables as stored, but the CPEs' (see readCarriedIDs).
		waitIDs()
		if s.ids.prev, err = carried, carriedErr; err != nil {
			return nil, nil, wrap(keyIDs, err)
		}
	}
	var idRecs []idRecord
	if s.ids.prev == nil {
		s.ids = newIDTables()
		if idRecs, err = decodeRecords[idRecord](dir, m.Files[keyIDs], dec); err != nil {
			return nil, nil, wrap(keyIDs, err)
		}
	}
	for i, r := range idRecs {
		if err := s.ids.add(r); err != nil {
			return nil, nil, wrap(keyIDs, fmt.Errorf("record %d: %w", i+1, err))
		}
	}
	if m.Version >= 4 {
		var lineHash []recHash
		if light {
			// A build with -previous finds the texts it is given in
			// the table by these (see prevTexts).
			lineHash = make([]recHash, m.Files[keyStrings].Records)
		}
		var chunks [][]byte
		if light {
			chunks = make([][]byte, len(m.Files[keyStrings].Chunks))
		}
		if s.details, err = decodeDetailsKeeping(dir, m, len(d.CVEs), dec, false, lineHash, chunks); err != nil {
			return nil, nil, err
		}
		s.textHash, s.textChunks = lineHash, chunks
	}
	if s.epss, err = decodeEPSSFile(dir, m, dec); err != nil {
		return nil, nil, err
	}
	if light {
		s.bodies = bodies
	}
	return s, bodies, nil
}

// bodyStamp sets c's name and dates from a stored CVE body, from its
// first members as the refresh guard reads them (bodyHead), without
// decoding the rest; a body of another shape is decoded whole for them.
func bodyStamp(body []byte, c *index.CVE) error {
	if name, created, updated, ok := bodyHead(body); ok {
		*c = index.CVE{Name: string(name), CreatedAt: string(created), UpdatedAt: string(updated)}
		return nil
	}
	var whole index.CVE
	if err := json.Unmarshal(body, &whole); err != nil {
		return err
	}
	*c = index.CVE{Name: whole.Name, CreatedAt: whole.CreatedAt, UpdatedAt: whole.UpdatedAt}
	return nil
}

// decodeCVE is the previous snapshot's CVE k whole (its body decoded,
// with its metrics), from a snapshot read by readPrevious.
func (s *Snapshot) decodeCVE(k int) (index.CVE, error) {
	if s.bodies == nil {
		return s.Data.CVEs[k], nil
	}
	var c index.CVE
	if err := json.Unmarshal(s.bodies[k], &c); err != nil {
		return index.CVE{}, fmt.Errorf("loader: snapshot %s: %s: record %d: %w", s.Dir, fileCVEs, k+1, err)
	}
	if c.Name != s.Data.CVEs[k].Name {
		return index.CVE{}, fmt.Errorf("loader: snapshot %s: %s: record %d is %s, read before as %s", s.Dir, fileCVEs, k+1, c.Name, s.Data.CVEs[k].Name)
	}
	c.Metrics = s.Data.CVEs[k].Metrics
	return c, nil
}

// decodeAll decodes every body of a snapshot read by readPrevious: the
// snapshot is then as Read returns it.
func (s *Snapshot) decodeAll() error {
	if s.bodies == nil {
		return nil
	}
	errs := index.OnCores(len(s.bodies), func() func(int) error {
		return func(k int) error {
			c, err := s.decodeCVE(k)
			s.Data.CVEs[k] = c
			return err
		}
	})
	if err := index.FirstError(errs); err != nil {
		return err
	}
	s.bodies = nil
	if err := s.ids.loadCVEs(nil); err != nil {
		return fmt.Errorf("loader: snapshot %s: %s: %w", s.Dir, fileIDs, err)
	}
	return nil
}

// opened is what Load and read start from: the checked manifest, the
// snapshot id, the decoder, and how to name a data file in an error.
type opened struct {
	m    Manifest
	id   string
	dec  *zstd.Decoder
	wrap func(key string, err error) error
}

// openSnapshot reads and checks dir's manifest (old: the previous format
// version too) and gets the decoder.
func openSnapshot(dir string, old bool) (opened, error) {
	m, id, err := readManifest(dir, old)
	if err != nil {
		return opened{}, err
	}
	dec, err := decoder()
	if err != nil {
		return opened{}, fmt.Errorf("loader: zstd: %w", err)
	}
	return opened{m, id, dec, func(key string, err error) error {
		return fmt.Errorf("loader: snapshot %s: %s: %w", dir, m.Files[key].Name, err)
	}}, nil
}

// joinMetrics puts each metrics record on its CVE.
func joinMetrics(cves []index.CVE, metrics []metricsRecord) error {
	pos := make(map[string]int, len(cves))
	for i := range cves {
		pos[cves[i].Name] = i
	}
	for n, r := range metrics {
		i, ok := pos[r.CVE]
		if !ok {
			return fmt.Errorf("record %d: metrics of %q, which the snapshot does not hold", n+1, r.CVE)
		}
		if cves[i].Metrics != nil {
			return fmt.Errorf("record %d: metrics of %s again", n+1, r.CVE)
		}
		cves[i].Metrics = r.Metrics
	}
	return nil
}

// decodeRecords decodes a data file of JSON lines into records of type T.
func decodeRecords[T any](dir string, fi FileInfo, dec *zstd.Decoder) ([]T, error) {
	out := make([]T, fi.Records)
	if err := eachRecord(dir, fi, dec, func(n int, line []byte) error {
		return json.Unmarshal(line, &out[n])
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeEntries decodes cves.jsonl.zst, laid out as lay says, into index
// entries in name order whose bodies are views into the decoded chunks;
// a dead line is not read.
func decodeEntries(dir string, fi FileInfo, lay *cvesLayout, dec *zstd.Decoder) ([]index.CVEEntry, error) {
	out := make([]index.CVEEntry, lay.cves)
	if err := eachRecord(dir, fi, dec, lay.scanInto(out)); err != nil {
		return nil, err
	}
	return out, nil
}

// scanInto returns what each line n of cves.jsonl.zst laid out as lay
// says is made: the index entry of the CVE that owns it, in out (by
// name); a dead line is not read.
func (lay *cvesLayout) scanInto(out []index.CVEEntry) func(n int, line []byte) error {
	return func(n int, line []byte) error {
		p := lay.owners[n]
		if p < 0 {
			return nil
		}
		e, err := index.ScanCVE(line)
		out[p] = e
		return err
	}
}

// decodeDetails decodes a snapshot's details files: the text table, one
// JSON string a line, and a line of numbers per CVE (see
// index.Details.AppendLine), of the cves CVEs in name order (that of
// cves.jsonl.zst before format 10). lazy (a load for serving): the text
// table's JSON texts are read on first use, from its chunks kept as
// stored (17 MB at 400k CVEs with records).
func decodeDetails(dir string, m Manifest, cves int, dec *zstd.Decoder, lazy bool) (*index.Details, error) {
	return decodeDetailsHashing(dir, m, cves, dec, lazy, nil)
}

// decodeDetailsHashing is decodeDetails, also setting lineHash (nil:
// not) to the hash (recordHash) of each line of the text table as
// stored.
func decodeDetailsHashing(dir string, m Manifest, cves int, dec *zstd.Decoder, lazy bool, lineHash []recHash) (*index.Details, error) {
	return decodeDetailsKeeping(dir, m, cves, dec, lazy, lineHash, nil)
}

// decodeDetailsKeeping is decodeDetailsHashing, also keeping in chunks
// (nil: not; else one per chunk of the text table) each chunk of the text
// table as decoded.
func decodeDetailsKeeping(dir string, m Manifest, cves int, dec *zstd.Decoder, lazy bool, lineHash []recHash, chunks [][]byte) (*index.Details, error) {
	wrap := func(key string, err error) error {
		return fmt.Errorf("loader: snapshot %s: %s: %w", dir, m.Files[key].Name, err)
	}
	// The text table: each chunk parsed as it is decoded, its JSON texts
	// (affected entries, SSVC decisions) kept compressed (see
	// index.TextsLoader).
	sfi := m.Files[keyStrings]
	tl, err := index.NewTextsLoader(sfi.Records, len(sfi.Chunks))
	if err != nil {
		return nil, wrap(keyStrings, err)
	}
	sfirsts := make([]int, len(sfi.Chunks)) // the number of each chunk's first record
	for i := 1; i < len(sfirsts); i++ {
		sfirsts[i] = sfirsts[i-1] + sfi.Chunks[i-1].Records
	}
	parse := func(c int, _, data []byte) error { return tl.ParsePiece(c, sfirsts[c], data) }
	if lineHash != nil {
		if len(lineHash) != sfi.Records {
			return nil, wrap(keyStrings, fmt.Errorf("%d records, %d hashes", sfi.Records, len(lineHash)))
		}
		parse = func(c int, _, data []byte) error {
			if err := eachLine(data, sfirsts[c], func(n int, line []byte) error {
				if n >= len(lineHash) {
					return fmt.Errorf("more than the %d records", len(lineHash))
				}
				lineHash[n] = recordHash(line)
				return nil
			}); err != nil {
				return err
			}
			return tl.ParsePiece(c, sfirsts[c], data)
		}
	}
	if lazy {
		// The JSON texts' blocks are made on their first read (see
		// index.TextsLoader.ParsePieceLazy) from the chunk as stored.
		parse = func(c int, raw, data []byte) error {
			size := sfi.Chunks[c].Bytes
			return tl.ParsePieceLazy(c, sfirsts[c], data, bytes.Clone(raw), func(raw []byte) ([]byte, error) {
				return dec.DecodeAll(raw, make([]byte, 0, size))
			})
		}
	}
	if chunks != nil {
		if len(chunks) != len(sfi.Chunks) {
			return nil, wrap(keyStrings, fmt.Errorf("%d chunks, %d kept", len(sfi.Chunks), len(chunks)))
		}
		each := parse
		parse = func(c int, raw, data []byte) error {
			chunks[c] = data // a buffer of its own: decoded without reuse
			return each(c, raw, data)
		}
	}
	if err := decodeChunks(dir, sfi, dec, chunks == nil, parse); err != nil {
		return nil, wrap(keyStrings, err)
	}
	fi := m.Files[keyDetails]
	if fi.Records != cves {
		return nil, wrap(keyDetails, fmt.Errorf("%d records for %d CVEs", fi.Records, cves))
	}
	l, err := tl.DetailsLoader(fi.Records, len(fi.Chunks))
	if err != nil {
		return nil, wrap(keyDetails, err)
	}
	switch {
	case m.Version < 5:
		l.WithoutAffected() // format 4: lines end after the metrics
	case m.Version < 6:
		l.WithoutEntryKeys() // format 5: lines end after ssvc
	}
	firsts := make([]int, len(fi.Chunks)) // the number of each chunk's first record
	for i := 1; i < len(firsts); i++ {
		firsts[i] = firsts[i-1] + fi.Chunks[i-1].Records
	}
	// Each chunk is parsed as it is decoded, on the decoding goroutines,
	// and its text dropped: nothing of the file is kept but the records.
	if err := decodeFileReusing(dir, fi, dec, func(c int, data []byte) error {
		return l.ParsePiece(c, firsts[c], data)
	}); err != nil {
		return nil, wrap(keyDetails, err)
	}
	d, err := l.Details()
	if err != nil {
		return nil, wrap(keyDetails, err)
	}
	if d.Len() != cves {
		return nil, wrap(keyDetails, fmt.Errorf("%d records for %d CVEs", d.Len(), cves))
	}
	return d, nil
}
