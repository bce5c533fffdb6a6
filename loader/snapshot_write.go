package loader

// Writing a snapshot: Write encodes the data into a temporary directory
// beside the target, which replaceDir (snapshot_install.go) then moves
// into place.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goccy/go-json"
	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader/internal/durable"
)

// Write writes d as a snapshot into dir, atomically: everything is written
// into a temporary directory beside dir, synced, and renamed into place;
// an existing dir is replaced only once the new one is complete, and only
// when it is a vulnd snapshot or an empty directory (never a file or any
// other directory: see checkReplace). builtAt is the build time; inputs
// describe what it was built from (the manifest gives no input's date).
// The id tables
// stored with it are those of d: ids already set are kept, and CPEs and
// metrics with id 0 get fresh ones (d is updated).
func Write(dir string, d *index.Data, builtAt time.Time, inputs []FileInfo) (Manifest, error) {
	return write(dir, d, tablesFromData(d), builtAt, inputs, nil, "", false, nil, "", nil, nil, nil, nil, false, recordsOut{})
}

// tablesFromData makes id tables holding the ids d already carries, then
// assigns the missing ones.
func tablesFromData(d *index.Data) *idTables {
	t := newIDTables()
	for i := range d.CVEs {
		c := &d.CVEs[i]
		for _, p := range c.CPEs {
			if p.ID > 0 {
				t.add(idRecord{Table: "cpe", ID: p.ID, URI: p.URI})
			}
		}
		for _, m := range c.Metrics {
			if m.ID > 0 {
				t.add(idRecord{Table: "cvss", ID: m.ID, CVE: c.Name, Version: m.Version, Source: m.Source})
			}
		}
	}
	for _, r := range d.Reports {
		for _, a := range r.Alerts {
			t.nextAlert = max(t.nextAlert, a.ID+1)
		}
	}
	t.assign(d.CVEs) // no CVE spilled (t.cold is nil): no error
	return t
}

// write is Write with the id tables, the inputs' dates (nil: none known),
// the manifest's refresh_of (see Manifest.RefreshOf), force (see BuildOptions.Force) and the EPSS scores to store (nil:
// none), of which only the rows of d's CVEs are kept, read from the file
// named epssFile, NVD's records packed (nil: d.NVD's, packed here) and
// the store of the fields of d's CVEs spilled as read (nil: none) and
// the bodies of d's CVEs carried over from a previous snapshot as stored
// (nil: none; a nil body is encoded), which are written as they are,
// and the previous snapshot's bodies to lay d's out over (nil: the
// compact layout; see cveslayout.go).
// With spend, what only the details need of d's CVEs (affected entries,
// SSVC decisions, entry keys, KEV entries) is let go once the details
// hold it, what only the bodies need once each body is written, the id
// tables once listed, and d.CVEs before the index is built: a build's
// CVEs and tables, which nothing reads after the write.
func write(dir string, d *index.Data, ids *idTables, builtAt time.Time, inputs []FileInfo, dates *InputDates, refreshOf string, force bool, epss *EPSS, epssFile string, nvd *nvdPacked, cold *coldStore, carried [][]byte, base *cvesBase, spend bool, recs recordsOut) (Manifest, error) {
	if dates == nil {
		dates = &InputDates{}
	}
	m := Manifest{
		Format:  formatName,
		Version: writeVersion,
		BuiltAt: formatTime(builtAt),
		Files:   map[string]FileInfo{},
		Inputs:  inputs,
		Newest:  dates,

		RefreshOf: refreshOf,
		Aliases:   recs.aliasSum,
	}
	parent := filepath.Dir(filepath.Clean(dir))
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	enc, err := newSnapshotEncoder()
	if err != nil {
		return m, fmt.Errorf("loader: zstd: %w", err)
	}
	defer func() {
		if enc != nil {
			enc.Close()
		}
	}()
	// The id tables, which nothing else needs once the CVEs carry their
	// ids, are written first and let go.
	if m.Files[keyIDs], err = writeIDs(filepath.Join(tmp, dataFiles[keyIDs]), enc, ids, d.CVEs, spend); err != nil {
		return m, fmt.Errorf("loader: build %s: %s: %w", dir, dataFiles[keyIDs], err)
	}
	ids = nil
	writePhase("ids written")
	// The bodies are encoded, checked (a build that would not load is
	// refused here rather than at serve time) and written as they are
	// made, a batch at a time, rather than held all at once beside the
	// CVEs they come from; the index is built from the file once the
	// CVEs are let go (see below), or, when the file is laid out over a
	// previous snapshot's, from its copied lines as they were read then
	// and the chunks written after them (see entriesOver).
	cw, err := newChunkWriter(filepath.Join(tmp, dataFiles[keyCVEs]), enc)
	if err != nil {
		return m, fmt.Errorf("loader: build %s: %s: %w", dir, dataFiles[keyCVEs], err)
	}
	if m.Version < cvesLayoutVersion {
		base = nil
	}
	var over *cvesOverlay
	if base != nil {
		// The previous file's chunks first, as they are.
		if over, err = base.start(cw, len(d.CVEs)); err != nil {
			cw.close()
			return m, fmt.Errorf("loader: build %s: the previous snapshot's %s: %w", dir, fileCVEs, err)
		}
	}
	if err := eachBody(d.CVEs, cold, carried, func(i int, body []byte) error {
		c := &d.CVEs[i]
		if spend {
			// What only the body needs goes with it.
			c.Summary, c.CPEs, c.CWEs, c.References, c.CVSS = "", nil, nil, nil, index.CVSS{}
		}
		if over != nil && over.keep(i, c.Name, body, carried) {
			return nil // where it was
		}
		return cw.line(body)
	}); err != nil {
		cw.close()
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	if m.Files[keyCVEs], err = cw.close(); err != nil {
		return m, fmt.Errorf("loader: build %s: %s: %w", dir, dataFiles[keyCVEs], err)
	}
	var lay *cvesLayout
	if over != nil {
		lay = over.layout(m.Files[keyCVEs])
	} else {
		chunks := make([]int, len(m.Files[keyCVEs].Chunks))
		for i, c := range m.Files[keyCVEs].Chunks {
			chunks[i] = c.Records
		}
		lay = compactCVEsLayout(chunks)
	}
	over = nil
	if m.Version >= cvesLayoutVersion {
		if m.Files[keyCVEsLayout], err = writeDataFile(filepath.Join(tmp, fileCVEsLayout), enc, lay.lines(), func(k int) ([]byte, error) {
			return lay.appendLine(nil, k), nil
		}); err != nil {
			return m, fmt.Errorf("loader: build %s: %s: %w", dir, fileCVEsLayout, err)
		}
	}
	if spend && cold != nil {
		cold.cpeIDs = nil // the CPE ids, kept for the bodies
	}
	carried = nil
	// Laid out over a previous snapshot's bodies, the index's entries
	// are made while the other files are written: those copied as stored
	// are scanned as they were decoded when it was read, the others
	// decoded from the chunks written after them (see entriesOver), which
	// takes little memory more. Otherwise the whole file is decoded once
	// the build's CVEs are let go (below).
	type entriesRead struct {
		entries []index.CVEEntry
		err     error
	}
	var early chan entriesRead
	if base != nil {
		early = make(chan entriesRead, 1)
		go func(fi FileInfo, base *cvesBase) {
			dec, err := decoder()
			if err != nil {
				early <- entriesRead{nil, fmt.Errorf("zstd: %w", err)}
				return
			}
			e, err := entriesOver(tmp, fi, lay, base, dec)
			early <- entriesRead{e, err}
		}(m.Files[keyCVEs], base)
		defer func() {
			if early != nil {
				<-early // nothing left running on an error return
			}
		}()
		base = nil
	}
	writePhase("bodies written")
	// The details are built once the bodies are written, in their order:
	// the texts they hold whole (the affected entries' JSON of CVE JSON 5
	// records, which a build holds compressed until then: see
	// index.HeldDetails) are then held beside the CVEs' fewest fields.
	details, err := buildDetails(d.CVEs, spend, recs.texts)
	if err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	writePhase("details built")
	if epss != nil {
		epss = epss.only(d.CVEs)
		m.EPSS = epssInfo(epss, epssFile)
	}
	var withMetrics []int
	for i := range d.CVEs {
		if len(d.CVEs[i].Metrics) > 0 {
			withMetrics = append(withMetrics, i)
		}
	}
	files := []struct {
		key  string
		n    int
		line func(int) ([]byte, error)
	}{
		{keyCWEs, len(d.CWEs), func(i int) ([]byte, error) { return marshal(&d.CWEs[i]) }},
		{keyMetrics, len(withMetrics), func(i int) ([]byte, error) {
			c := &d.CVEs[withMetrics[i]]
			return marshal(&metricsRecord{CVE: c.Name, Metrics: c.Metrics})
		}},
		{keyReports, len(d.Reports), func(i int) ([]byte, error) { return marshal(&d.Reports[i]) }},
		{keyDetails, details.Len(), func(i int) ([]byte, error) { return details.AppendLine(nil, i), nil }},
		{keyStrings, details.TextCount(), func(i int) ([]byte, error) {
			if j, ok := details.PrevText(i); ok {
				return recs.texts.line(j) // as the previous table stores it
			}
			text, err := details.Text(i)
			if err != nil {
				return nil, err
			}
			return marshal(text)
		}},
	}
	if m.Version >= cve5FromVersion {
		if recs.from != nil && len(recs.from) != len(d.CVEs) {
			return m, fmt.Errorf("loader: build %s: %s: %d lines for %d CVEs", dir, fileCVE5From, len(recs.from), len(d.CVEs))
		}
		files = append(files, struct {
			key  string
			n    int
			line func(int) ([]byte, error)
		}{keyCVE5From, len(d.CVEs), func(i int) ([]byte, error) {
			if recs.from == nil {
				return []byte{'-'}, nil
			}
			return recs.from[i].appendLine(nil), nil
		}})
	}
	if epss != nil {
		files = append(files, struct {
			key  string
			n    int
			line func(int) ([]byte, error)
		}{keyEPSS, epss.Len(), func(i int) ([]byte, error) { return epss.appendLine(nil, i), nil }})
	}
	// The text table (180 MB at 400k with records, most of the time
	// of these files: compressed, and in a refresh the previous table
	// decoded first) is written on a goroutine of its own while the
	// others are made (their lines, the metrics' and reports' JSON,
	// take one goroutine's time); an error is the first file's in the
	// list's order, as when they were written one after the other.
	type written struct {
		fi  FileInfo
		err error
	}
	results := make([]written, len(files))
	var textsDone chan struct{}
	for k, f := range files {
		name := dataFiles[f.key]
		if f.key == keyEPSS {
			name = fileEPSS
		}
		write := func() {
			fi, err := writeDataFile(filepath.Join(tmp, name), enc, f.n, f.line)
			if err != nil {
				err = fmt.Errorf("loader: build %s: %s: %w", dir, name, err)
			}
			results[k] = written{fi, err}
		}
		if f.key == keyStrings {
			textsDone = make(chan struct{})
			go func() {
				defer close(textsDone)
				write()
			}()
			continue
		}
		if write(); results[k].err != nil {
			break
		}
	}
	if textsDone != nil {
		<-textsDone
	}
	for k, f := range files {
		if results[k].err != nil {
			return m, results[k].err
		}
		if results[k].fi.Name == "" {
			break // not written: an earlier file failed
		}
		m.Files[f.key] = results[k].fi
	}
	files, withMetrics = nil, nil
	if recs.texts != nil {
		recs.texts.close()
	}
	if nvd == nil {
		p, err := index.PackNVD(d.NVD, enc)
		if err != nil {
			return m, fmt.Errorf("loader: build %s: %w", dir, err)
		}
		nvd = &nvdPacked{PackedNVD: p}
	}
	if nvd.PackedNVD == nil {
		// Written already (see nvdPacked.spill).
		for key, fi := range nvd.files {
			if err := os.Rename(filepath.Join(nvd.dir, fi.Name), filepath.Join(tmp, fi.Name)); err != nil {
				return m, fmt.Errorf("loader: build %s: %w", dir, err)
			}
			m.Files[key] = fi
		}
	} else if err = writeNVD(tmp, nvd, enc, m.Version, m.Files); err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	nvd = nil
	// The encoders' buffers (32 MB) go before the index is built.
	enc.Close()
	enc = nil
	writePhase("files written")
	if spend {
		// Nothing reads the build's CVEs after this: the index is made
		// from the bodies as written, as a load makes it, in the memory
		// they held (collected now, not once the heap has doubled). So
		// are the details: read back from their files as a load reads
		// them, their JSON texts (the affected entries of CVE JSON 5
		// records) kept compressed, rather than the ones built held
		// whole beside the index (at 100k, 43 MB of the 270 MB live
		// while it was built: a build's peak).
		d.CVEs, details = nil, nil
		runtime.GC()
	}
	// The index checks the data and gives the counts.
	dec, err := decoder()
	if err != nil {
		return m, fmt.Errorf("loader: zstd: %w", err)
	}
	var entries []index.CVEEntry
	if early != nil {
		r := <-early
		early = nil
		entries, err = r.entries, r.err
	} else {
		entries, err = decodeEntries(tmp, m.Files[keyCVEs], lay, dec)
	}
	if err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	if details == nil {
		if details, err = decodeDetails(tmp, m, lay.cves, dec, true); err != nil {
			return m, fmt.Errorf("loader: build %s: %w", dir, err)
		}
	}
	writePhase("entries read")
	ix, err := index.BuildEntries(d.CWEs, entries, details, d.Reports, index.Meta{EPSS: epss.source()})
	if err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	m.Counts = ix.Counts()
	writePhase("index built")
	runtime.KeepAlive(ix)
	ix, entries, details = nil, nil, nil
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return m, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	// Written last, the manifest's sync of tmp also makes every data
	// file's entry (and tmp's mode) durable before the rename.
	if err := durable.WriteFile(filepath.Join(tmp, ManifestName), append(raw, '\n')); err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	if err := replaceDir(tmp, dir, force); err != nil {
		return m, err
	}
	done = true
	return m, nil
}

// writePhase is told when the write reaches a phase (tests profile the
// heap there); it does nothing otherwise.
var writePhase = func(name string) {}

// writeVersion is the format version a build writes: FormatVersion, which
// tests set to 6 to write a snapshot as format 6 did (it differs only in
// its NVD facts).
var writeVersion = FormatVersion

var marshalOptions = []json.EncodeOptionFunc{json.DisableHTMLEscape()}

func marshal(v any) ([]byte, error) { return json.MarshalWithOption(v, marshalOptions...) }

// eachBody encodes every CVE's API body and checks that the index takes
// it (index.ScanCVE), on several goroutines, a batch at a time, and passes
// each body to f (nil: none) in the order of cves; the error is the first
// CVE's whose body is bad, else f's. A CVE's fields spilled in cold are
// read back for its body only. A CVE with a body in carried (nil: none)
// has that one, as it is: one a snapshot stores, which the index is
// built from after the write, checking it again.
func eachBody(cves []index.CVE, cold *coldStore, carried [][]byte, f func(i int, body []byte) error) error {
	const batch = 4096
	bodies := make([][]byte, min(batch, len(cves)))
	errs := make([]error, len(bodies))
	for from := 0; from < len(cves); from += batch {
		part, base := cves[from:min(from+batch, len(cves))], from
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < runtime.GOMAXPROCS(0); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var buf []byte
				for {
					from := int(next.Add(64) - 64)
					if from >= len(part) {
						return
					}
					for i := from; i < min(from+64, len(part)); i++ {
						if carried != nil && carried[base+i] != nil {
							bodies[i], errs[i] = carried[base+i], nil
							continue
						}
						c := &part[i]
						if cold != nil {
							// A copy: the fields read back go
							// with the body.
							whole := *c
							if buf, errs[i] = cold.fill(&whole, buf); errs[i] != nil {
								continue
							}
							c = &whole
						}
						bodies[i] = index.EncodeCVE(c)
						_, errs[i] = index.ScanCVE(bodies[i])
					}
				}
			}()
		}
		wg.Wait()
		for i := range part {
			if errs[i] != nil {
				return fmt.Errorf("record %d: %w", from+i+1, errs[i])
			}
		}
		for i := range part {
			if f != nil {
				if err := f(from+i, bodies[i]); err != nil {
					return fmt.Errorf("record %d: %w", from+i+1, err)
				}
			}
			bodies[i] = nil
		}
	}
	return nil
}

// writeDataFile writes n lines as a chunked data file and returns its
// manifest entry.
func writeDataFile(path string, enc *zstd.Encoder, n int, line func(int) ([]byte, error)) (FileInfo, error) {
	w, err := newChunkWriter(path, enc)
	if err != nil {
		return FileInfo{}, err
	}
	for i := 0; i < n; i++ {
		b, err := line(i)
		if err == nil {
			err = w.line(b)
		}
		if err != nil {
			w.close()
			return FileInfo{}, fmt.Errorf("record %d: %w", i+1, err)
		}
	}
	return w.close()
}

// buildDetails makes the details of cves, in their order, taking the
// texts of prev's table by id (nil: none; see textscarry.go). With spend,
// what only the details need of each CVE (affected entries, SSVC
// decision, entry keys, KEV entry) is let go once they hold it, and,
// unless prev's texts are taken, the JSON of the affected entries of the
// records held (CVE.Held) stays in their store, compressed, until it is
// written (see index.DetailsBuilder.KeepHeldFar): the details are only
// written, then read back from their files.
func buildDetails(cves []index.CVE, spend bool, prev *prevTexts) (*index.Details, error) {
	b := index.NewDetailsBuilder()
	if prev != nil {
		prev.carry(b)
	} else if spend {
		b.KeepHeldFar()
	}
	for i := range cves {
		c := &cves[i]
		if err := b.Add(c); err != nil {
			return nil, err
		}
		if spend {
			c.Affected, c.SSVC, c.EntryKeys, c.KEV, c.Held = nil, nil, nil, nil, nil
		}
	}
	return b.Details(), nil
}
