package loader

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vulnd/vulnd/index"
)

// BuildOptions says what a snapshot is built from and where it goes.
type BuildOptions struct {
	// CWECatalog is MITRE's catalog (cwec_v*.xml or the .zip MITRE ships).
	CWECatalog string
	// Feeds are the CVE inputs, in the order given, each told by its
	// content (see ClassifyInputs): NVD CVE API 2.0 feed files (.json,
	// .json.gz or a .zip holding one JSON), and CVE JSON 5 record files
	// of the CVE Program (a record, an array of records, compressed, or a
	// zip of record files at any depth). When two feeds hold the same
	// CVE, the later lastModified wins, and on a tie the file named
	// later; the same for two records of one CVE, by dateUpdated. A CVE
	// in a feed keeps NVD's fields and gains its record's affected
	// entries and SSVC decision; a CVE only in a record is served from
	// it (see mergeCVE5).
	Feeds []string
	// Out is the snapshot directory to write, atomically. An existing Out
	// is replaced only when it is a vulnd snapshot or an empty directory
	// (see checkOutDir); never when it is or holds an input or Previous.
	Out string
	// Force lets Out be a non-empty directory that is not a snapshot,
	// which the build then replaces, deleting what it holds. It never
	// lets the build replace a file, an input or Previous. It also lets
	// through a refresh that CheckRefresh refuses.
	Force bool
	// EPSS, if set, is FIRST's daily EPSS file (epss_scores-DATE.csv,
	// plain or compressed; see ReadEPSS): the snapshot keeps the scores
	// of its CVEs. Without it, a build with Previous keeps the previous
	// snapshot's scores (a refresh of the CVEs alone does not drop
	// them), and one without Previous has none. With both, a CVE whose
	// score moved by 0.1 or more gets an "EPSS changed" event, unless
	// the previous snapshot had no scores or FIRST's model changed.
	EPSS string
	// Previous, if set, is the snapshot to compare with: its reports and
	// id tables are kept, and a report is added for what changed. Unless
	// Force is set, the new CVEs must pass CheckRefresh against it.
	Previous string
	// KeepReports is how many reports to keep (the new one included):
	// the new one always, then the newest of the others; 0 means
	// DefaultKeepReports.
	KeepReports int
	// Time is the build time (the new report's created_at).
	Time time.Time
	// Stage, if set, is told when each stage of the build ends and how
	// long it took ("read feeds", "diff", ...).
	Stage func(name string, took time.Duration, detail string)
	// Warn, if set, is told, in one line, of what the build did that the
	// caller may not have meant: replacing, without Previous, a snapshot
	// that has reports (the new one starts its history over).
	Warn func(line string)
	// Full makes a build with Previous read every input, as one without
	// does, even when it could read only the feeds that changed since
	// Previous was built (see readFeedsIncremental): the result is the
	// same, byte for byte.
	Full bool
	// Aliases, if set, is the alias file that maps the vendor and product
	// names of CVE JSON 5 affected entries onto NVD's CPE names (see
	// ParseAliases), replacing the default one (loader/aliases.txt).
	Aliases string
}

// DefaultKeepReports is how many reports a build keeps by default.
const DefaultKeepReports = 100

// Build reads the inputs, maps them and writes the snapshot. The error
// names the file and record at fault.
func Build(opt BuildOptions) (Manifest, error) {
	if len(opt.Feeds) == 0 {
		return Manifest{}, fmt.Errorf("loader: no NVD feed or CVE JSON 5 files given")
	}
	inputPaths := append([]string{opt.CWECatalog}, opt.Feeds...)
	if opt.EPSS != "" {
		inputPaths = append(inputPaths, opt.EPSS)
	}
	if err := checkOutDir(opt.Out, inputPaths, opt.Previous, opt.Force); err != nil {
		return Manifest{}, err
	}
	// A snapshot at Out with reports, replaced without Previous, loses
	// them: most likely a recipe that builds into the served directory.
	replacedReports := 0
	if opt.Previous == "" {
		replacedReports = reportsIn(opt.Out)
	}
	aliases, aliasSum, err := readAliases(opt.Aliases)
	if err != nil {
		return Manifest{}, err
	}
	start := time.Now()
	stage := func(name, detail string) {
		if opt.Stage != nil {
			opt.Stage(name, time.Since(start), detail)
		}
		start = time.Now()
	}
	// Each input is hashed for the manifest as it is read: it may be a
	// pipe, which cannot be read twice.
	cwes, cweInfo, cweDate, err := readCWECatalog(opt.CWECatalog)
	if err != nil {
		return Manifest{}, err
	}
	stage("read CWE catalog", plural(len(cwes), "entry", "entries"))
	feeds, records, err := ClassifyInputs(opt.Feeds)
	if err != nil {
		return Manifest{}, err
	}
	// NVD's records are packed as the snapshot stores them now, while
	// little else is held, rather than when it is written.
	enc, err := newSnapshotEncoder()
	if err != nil {
		return Manifest{}, fmt.Errorf("loader: zstd: %w", err)
	}
	defer func() {
		if enc != nil {
			enc.Close()
		}
	}()
	var (
		cves     []index.CVE
		cold     *coldStore // cves' spilled fields (nil: none)
		carried  [][]byte   // by cves, the bodies carried over as stored (nil: none)
		nvd      *nvdPacked
		feedInfo []FileInfo
		// The records read beside the feeds (see cve5Early), when they
		// were.
		early *cve5Early
	)
	inc, why, err := readFeedsIncremental(opt, feeds, records, aliases, aliasSum, enc, stage)
	if err != nil {
		return Manifest{}, err
	}
	var prev *Snapshot // read already
	var base *cvesBase // the previous snapshot's bodies, to lay the new ones over
	if inc != nil && inc.fallback {
		prev, inc = inc.prev, nil
	}
	incremental := inc != nil
	var carriedRecs *carriedRecords // what the records gave, carried over (nil: read)
	if incremental {
		cves, carried, nvd, feedInfo, prev, carriedRecs = inc.cves, inc.bodies, inc.nvd, inc.infos, inc.prev, inc.records
		stage("read feeds", plural(len(cves), "CVE", "CVEs")+" from "+plural(len(feeds), "file", "files")+
			fmt.Sprintf(", incrementally: %d read (%d of their records as -previous has them), %d NVD records carried over from -previous (%d of them mapped again), %d of %d blocks kept",
				inc.changed, inc.known, inc.carried, inc.remapped, inc.kept, len(nvd.Blocks)))
		inc = nil // prev is let go before writing
	} else {
		if why != "" {
			stage("full build", "not incremental: "+why)
		}
		spill, err := spillFile(opt.Out)
		if err != nil {
			return Manifest{}, err
		}
		defer spill.Close()
		if opt.Previous == "" {
			// The CVEs' summaries, CWEs and references wait for the
			// write in a file beside -o (a -previous build compares
			// them, and holds them).
			f, err := spillFile(opt.Out)
			if err != nil {
				return Manifest{}, err
			}
			defer f.Close()
			cold = newColdStore(f)
		}
		if cold != nil && len(records) > 0 && runtime.GOMAXPROCS(0) >= cve5EarlyProcs {
			// The records are read beside the feeds, on the core they
			// leave idle (see cve5Early).
			early = readCVE5Early(records, aliases)
			defer early.abandon()
		}
		var nvdRecs *nvdRecords
		cves, nvdRecs, feedInfo, err = readFeedsAt(feeds, feedPositions(opt.Feeds, feeds), spill, cold)
		if err != nil {
			return Manifest{}, err
		}
		stage("read feeds", plural(len(cves), "CVE", "CVEs")+" from "+plural(len(feeds), "file", "files"))
		if early != nil {
			// The read is waited for now, on both cores, rather than
			// beside the pack, whose blocks and garbage it would add to
			// (a peak of 1.46 times NVD's alone).
			if err := early.finish(cves, cold); err != nil {
				return Manifest{}, err
			}
			stage("read CVE JSON 5 records beside the feeds", fmt.Sprintf("the rest of the read, %s, %d of CVEs NVD lacks read again whole",
				plural(len(early.parts), "record", "records"), len(early.whole)))
		}
		// What the read held only while reading (the last feed's
		// records in flight, the slices' old arrays) is collected now:
		// the heap's next goal is then twice what the build holds, not
		// twice what it held mid-read (at 100k, 410 MB instead of 590,
		// which the pack, EPSS and ids phases would fill with garbage).
		runtime.GC()
		nvd, err = nvdRecs.pack(enc, previousLayout(opt.Previous))
		if err != nil {
			return Manifest{}, fmt.Errorf("loader: build %s: %w", opt.Out, err)
		}
		nvdRecs = nil
		spill.Close()
	}
	// The packed records' files (nvd.zst, the facts, the provenance) are
	// written beside -o now and moved into the snapshot by the write,
	// rather than their frames and facts held through the rest of the
	// build.
	packedDetail := plural(len(nvd.Facts), "record", "records") + ", " + strconv.Itoa(nvdSize(nvd)>>20) + " MiB"
	// NVD's records laid over the previous snapshot's, or compacted:
	// the CVE bodies follow (one decision for both files).
	overlaid := nvd.kept != nil
	tmpDir, err := spillDir(opt.Out)
	if err != nil {
		return Manifest{}, err
	}
	defer os.RemoveAll(tmpDir)
	// An incremental build writes them on a goroutine while it assigns
	// the ids and makes the diff, which do not need them (see
	// spillBeside); the write waits for them.
	var spilled func() error
	if incremental {
		spilled = spillBeside(nvd, tmpDir, enc)
		defer spilled() // nothing left running on an error return
		enc = nil
	} else if err := nvd.spill(tmpDir, enc); err != nil {
		return Manifest{}, fmt.Errorf("loader: build %s: %w", opt.Out, err)
	}
	// Closed now, not at the end: its buffers (32 MB) are let go before
	// the write makes its own.
	if enc != nil {
		enc.Close()
		enc = nil
	}
	if !incremental {
		// The records as read, packed and written are let go: likewise.
		runtime.GC()
		stage("pack NVD records", packedDetail)
	}
	dates := inputDates(cweDate, cves)
	var recordInfo []FileInfo
	var recordStamps []Stamp     // by name, for the refresh guard
	var recordFroms []recordFrom // by cves, where each CVE's record came from
	if r := carriedRecs; r != nil {
		// cves has the CVEs of records alone already.
		dates.NVD, recordInfo = r.nvd, r.infos
		if recordFroms, err = r.fromOf(cves, prev); err != nil {
			return Manifest{}, fmt.Errorf("loader: -previous %s: %w", opt.Previous, err)
		}
		dates.CVE5 = newestFrom(recordFroms)
		if opt.Previous != "" {
			recordStamps = recordStampsOf(cves, recordFroms)
		}
	} else if len(records) > 0 {
		var (
			recs  []*CVE5Record
			infos []FileInfo
		)
		if early != nil {
			recs, infos = early.records()
		} else {
			keep := keptOfCVE5(cves)
			if cold != nil {
				keep.holdFor(cves, cold, aliases)
			}
			if recs, infos, err = readCVE5Files(records, keep); err != nil {
				return Manifest{}, err
			}
		}
		// Decoding the records left garbage of many sizes (most of what
		// it allocated): returned to the OS now, the write does not grow
		// beside it (peak RSS 1.75 GB instead of 1.97 at 100k).
		debug.FreeOSMemory()
		dates.CVE5 = newestRecord(recs)
		var only int
		cves, only = mergeCVE5(cves, recs)
		recordFroms = recordFromsOf(cves, recs, feedPositions(opt.Feeds, records))
		setEntryKeys(cves, cold, aliases)
		recordInfo = infos
		if opt.Previous != "" {
			recordStamps = make([]Stamp, len(recs))
			for i, r := range recs {
				recordStamps[i] = Stamp{Name: r.ID, UpdatedAt: r.Updated}
			}
		}
		stage("read CVE JSON 5 records", plural(len(recs), "CVE", "CVEs")+" from "+plural(len(records), "file", "files")+fmt.Sprintf(", %d of them not in the feeds", only))
	}
	inputs := append([]FileInfo{cweInfo}, inputsInOrder(opt.Feeds, feeds, feedInfo, records, recordInfo)...)
	var epss *EPSS
	epssFile := ""
	if opt.EPSS != "" {
		e, fi, err := readEPSS(opt.EPSS)
		if err != nil {
			return Manifest{}, err
		}
		epss, epssFile = e, epssFileName(opt.EPSS)
		inputs = append(inputs, fi)
		stage("read EPSS", plural(e.Len(), "score", "scores")+" of "+e.Date.UTC().Format(time.DateOnly)+", model "+e.Model)
	}
	ids := newIDTables()
	// Without -previous, the tables start empty and are numbered once.
	ids.fresh = opt.Previous == ""
	ids.cold = cold
	var reports []index.Report
	refreshOf := "" // the previous snapshot's id, once the guard held
	if opt.Previous != "" {
		if prev == nil {
			if prev, err = Read(opt.Previous); err != nil {
				return Manifest{}, fmt.Errorf("loader: -previous: %w", err)
			}
			stage("read previous", plural(len(prev.Data.CVEs), "CVE", "CVEs")+", "+plural(len(prev.Data.Reports), "report", "reports"))
		}
		ids, reports = prev.ids, prev.Data.Reports
		if carried != nil {
			// The carried CVEs have their ids; those of the others
			// are read from the tables as stored.
			ids.carried = carried
			names := map[string]bool{}
			for i := range cves {
				if carried[i] == nil {
					names[cves[i].Name] = true
				}
			}
			if err := ids.loadCVEs(names); err != nil {
				return Manifest{}, fmt.Errorf("loader: -previous %s: %s: %w", opt.Previous, fileIDs, err)
			}
		}
		if !opt.Force {
			if err := CheckRefresh(StampsOf(prev.Data.CVEs), refreshStamps(cves, recordStamps), "-previous "+opt.Previous); err != nil {
				return Manifest{}, err
			}
			refreshOf = prev.ID
		}
	}
	if err := ids.assign(cves); err != nil {
		return Manifest{}, fmt.Errorf("loader: build %s: %w", opt.Out, err)
	}
	stage("assign ids", "")
	fresh := "" // the new report's id

	var moved map[string]epssChange // the EPSS scores that alert
	switch {
	case prev != nil && epss == nil && prev.epss != nil:
		// A refresh of the CVEs alone keeps the scores it had: nothing
		// moved.
		epss, epssFile = prev.epss, prev.Manifest.EPSS.File
		stage("keep EPSS", plural(epss.Len(), "score", "scores")+" of "+epss.Date.UTC().Format(time.DateOnly)+" from -previous")
	case prev != nil:
		var why string
		if moved, why = epssChanges(prev.epss, epss); why != "" && opt.Warn != nil {
			opt.Warn(why)
		}
	}
	if prev != nil {
		at := formatTime(opt.Time)
		// The CVEs compared: all of them, or, when the unchanged ones
		// were carried over as bytes, those that changed and those
		// whose EPSS score moved, with the previous versions of them
		// decoded now.
		olds, news, decoded := prev.Data.CVEs, cves, ""
		if prev.bodies != nil {
			if olds, news, err = changedCVEs(prev, cves, carried, moved); err != nil {
				return Manifest{}, fmt.Errorf("loader: -previous: %w", err)
			}
			decoded = ", " + plural(len(olds), "previous CVE", "previous CVEs") + " decoded of " + strconv.Itoa(len(prev.Data.CVEs))
		} else if err := previousAffected(prev); err != nil {
			return Manifest{}, fmt.Errorf("loader: -previous: %w", err)
		}
		if n := baselineAffected(olds, news); n > 0 && opt.Warn != nil {
			opt.Warn(fmt.Sprintf("-previous %s has no affected entries (built without CVE JSON 5 records): %s of it that now %s entries raise no Affected changed",
				opt.Previous, plural(n, "CVE", "CVEs"), map[bool]string{true: "has", false: "have"}[n == 1]))
		}
		alerts, err := diffCVEsEPSS(olds, news, ids, at, aliases, moved)
		if err != nil {
			return Manifest{}, err
		}
		if len(alerts) > 0 {
			// The new report is kept whatever its time: a -time older
			// than the kept reports must not drop the one just made.
			fresh = reportID(opt.Time, reports)
			reports = append(reports, index.Report{ID: fresh, CreatedAt: at, Alerts: alerts})
		}
		if overlaid {
			base = cvesBaseOf(prev)
		}
		prev, olds, news = nil, nil, nil // let the previous records go before writing
		stage("diff", plural(len(alerts), "alert", "alerts")+decoded)
	}
	reports = keepNewest(reports, keep(opt.KeepReports), fresh)
	d := &index.Data{CWEs: cwes, CVEs: cves, Reports: reports}
	out := recordsOut{from: recordFroms}
	if carriedRecs != nil {
		out.texts = carriedRecs.texts
	}
	if len(records) > 0 {
		out.aliasSum = aliasSum // else the alias file mapped nothing
	}
	recordFroms = nil
	if spilled != nil {
		if err := spilled(); err != nil {
			return Manifest{}, fmt.Errorf("loader: build %s: %w", opt.Out, err)
		}
		stage("write NVD records", packedDetail+" (written beside the ids and the diff: the time waited for them)")
	}
	m, err := write(opt.Out, d, ids, opt.Time, inputs, dates, refreshOf, opt.Force, epss, epssFile, nvd, cold, carried, base, true, out)
	if err != nil {
		return m, err
	}
	stage("write snapshot", "")
	if replacedReports > 0 && opt.Warn != nil {
		opt.Warn(fmt.Sprintf("replaced the snapshot in %s and its %s without -previous: the new snapshot starts its report history over (to keep it, build with -previous %s -o %s.next and move that into place)",
			opt.Out, plural(replacedReports, "report", "reports"), opt.Out, filepath.Clean(opt.Out)))
	}
	return m, nil
}

// inputDates starts the manifest's dates of the inputs: the CWE catalog's
// Date (YYYY-MM-DD, "" for none) and the newest lastModified of NVD's
// records (cves, before any JSON 5 record is merged; none for no NVD
// record).
func inputDates(cweDate string, cves []index.CVE) *InputDates {
	d := &InputDates{}
	if cweDate != "" {
		s := cweDate + " 00:00:00Z"
		d.CWE = &s
	}
	newest := -1
	for i := range cves {
		if newest < 0 || cves[i].UpdatedAt > cves[newest].UpdatedAt {
			newest = i
		}
	}
	if newest >= 0 {
		// A copy: a pointer into cves would keep them all until the
		// manifest is written, after the write has let them go.
		s := cves[newest].UpdatedAt
		d.NVD = &s
	}
	return d
}

// newestRecord is the newest dateUpdated (else datePublished) of recs, in
// the API's form; nil when no record has one. A copy: a pointer into a
// record would keep it, and the store of held texts it refers to, until
// the manifest is written.
func newestRecord(recs []*CVE5Record) *string {
	newest := ""
	for _, r := range recs {
		if r.Updated > newest {
			newest = r.Updated
		}
	}
	if newest == "" {
		return nil
	}
	return &newest
}

// readAliases reads the alias file at path, or returns the default one
// when path is "", with the SHA-256 of its bytes (see aliasesSum).
func readAliases(path string) (*Aliases, string, error) {
	if path == "" {
		a, err := DefaultAliases()
		return a, aliasesSum([]byte(defaultAliasesText)), err
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("loader: aliases: %w", err)
	}
	a, err := ParseAliases(path, bytes.NewReader(text))
	return a, aliasesSum(text), err
}

// setEntryKeys gives each CVE without NVD CPEs the vendors and products
// of its affected entries (EntryKeys, through aliases), each key with the
// entries that give it; a CVE with CPEs gets none (NVD's analysis
// supersedes its entries). cold holds the CPEs of the CVEs it spilled.
// A CVE whose record is held (CVE.Held) has its keys there already.
func setEntryKeys(cves []index.CVE, cold *coldStore, aliases *Aliases) {
	for i := range cves {
		c := &cves[i]
		c.EntryKeys = nil
		if len(c.Affected) == 0 || cold.cpeCount(c) > 0 {
			continue
		}
		c.EntryKeys = entryKeysOf(c.Affected, aliases)
	}
}

// entryKeysOf returns the entry keys of a CVE without NVD CPEs whose
// affected entries are es (see setEntryKeys).
func entryKeysOf(es []index.AffectedEntry, aliases *Aliases) []index.EntryKey {
	var keys []index.EntryKey
	for e := range es {
		for _, k := range EntryKeys(&es[e], aliases) {
			if !storableName(k.Vendor) || !storableName(k.Product) {
				continue
			}
			j := slices.IndexFunc(keys, func(x index.EntryKey) bool { return x.Vendor == k.Vendor && x.Product == k.Product })
			if j < 0 {
				keys = append(keys, index.EntryKey{Vendor: k.Vendor, Product: k.Product})
				j = len(keys) - 1
			}
			if ks := keys[j].Entries; len(ks) == 0 || ks[len(ks)-1] != e {
				keys[j].Entries = append(ks, e)
			}
		}
	}
	return keys
}

// storableName reports whether a key's vendor or product can be listed:
// not a control character in it (a CPE 2.2 URI's %0a decodes to one),
// which no vendor or product name holds.
func storableName(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// refreshStamps are the stamps CheckRefresh compares with the previous
// snapshot's: a CVE's updated_at, or its record's dateUpdated when that
// is later (records, by name, as cves). A CVE served from its record
// until now has its dateUpdated as updated_at; NVD's record, when it
// arrives, may be older than that (the CVE Program's container updated
// every record on 2024-08-01, after NVD had received many), which is NVD
// taking over, not a feed going back in time. An older record still is.
func refreshStamps(cves []index.CVE, records []Stamp) []Stamp {
	out := StampsOf(cves)
	j := 0
	for i := range out {
		for j < len(records) && records[j].Name < out[i].Name {
			j++
		}
		if j < len(records) && records[j].Name == out[i].Name && records[j].UpdatedAt > out[i].UpdatedAt {
			out[i].UpdatedAt = records[j].UpdatedAt
		}
	}
	return out
}

// ClassifyInputs tells a build's CVE inputs apart by their content: the
// CVE JSON 5 record files (IsCVE5) and the others, taken as NVD feeds,
// each in the order given. Only regular files are looked into: anything
// else (a pipe: vulnd build ... <(zcat feed.gz)) can be read only once,
// so it is taken as a feed, as before JSON 5 records were read. The
// error is for a file that cannot be opened or read.
func ClassifyInputs(paths []string) (feeds, records []string, err error) {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			ok, err := IsCVE5(p)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				records = append(records, p)
				continue
			}
		}
		feeds = append(feeds, p)
	}
	return feeds, records, nil
}

// inputsInOrder returns the FileInfo of each input in the order given
// (paths), from those of the feeds and of the record files, each in the
// order of its list. A path given twice is in both lists at its place.
func inputsInOrder(paths, feeds []string, feedInfo []FileInfo, records []string, recordInfo []FileInfo) []FileInfo {
	out := make([]FileInfo, 0, len(paths))
	f, r := 0, 0
	for _, p := range paths {
		switch {
		case f < len(feeds) && feeds[f] == p:
			out = append(out, feedInfo[f])
			f++
		case r < len(records) && records[r] == p:
			out = append(out, recordInfo[r])
			r++
		}
	}
	return out
}

// feedPositions is the place of each feed among a build's inputs, as in
// the manifest's Inputs (the CWE catalog first, then paths in order; see
// inputsInOrder): feeds are those of paths, in their order.
func feedPositions(paths, feeds []string) []int {
	out := make([]int, 0, len(feeds))
	for i, p := range paths {
		if len(out) < len(feeds) && feeds[len(out)] == p {
			out = append(out, 1+i)
		}
	}
	return out
}

// keep is KeepReports with its default.
func keep(n int) int {
	if n <= 0 {
		return DefaultKeepReports
	}
	return n
}

// reportID derives a URL-safe id from the build time
// ("20261122T060000Z"). If a kept report has an id of that time, the new
// one gets "-n", one more than the highest n kept ("-2" after the plain
// id): the API orders reports of the same created_at by that number,
// newest first, so the new report must have the highest, even when
// -keep-reports dropped lower ones.
func reportID(t time.Time, kept []index.Report) string {
	base := t.UTC().Format("20060102T150405Z")
	highest := 0
	for _, r := range kept {
		switch {
		case r.ID == base:
			highest = max(highest, 1)
		case strings.HasPrefix(r.ID, base+"-"):
			if n, err := strconv.Atoi(r.ID[len(base)+1:]); err == nil && n >= 2 {
				highest = max(highest, n)
			}
		}
	}
	if highest == 0 {
		return base
	}
	return base + "-" + strconv.Itoa(highest+1)
}

// keepNewest keeps the n newest reports, in the API's order (created_at
// newest first, then build order newest first; see index.SortReports),
// and the report of id fresh ("": none) whatever its time: a build given
// a -time older than the kept reports must not drop the one it made.
func keepNewest(reports []index.Report, n int, fresh string) []index.Report {
	if len(reports) <= n {
		return reports
	}
	index.SortReports(reports)
	for i := n; fresh != "" && i < len(reports); i++ {
		if reports[i].ID == fresh {
			return append(reports[:n-1], reports[i])
		}
	}
	return reports[:n]
}

// ReadFeeds decodes NVD feed files one record at a time and merges them:
// when two records share an id, the later lastModified wins, and on a tie
// the one read later (a later file, or later in the same file). The result
// is in no particular order and has no cpe_id assigned.
func ReadFeeds(paths []string) ([]index.CVE, error) {
	cves, _, _, err := readFeeds(paths, nil)
	return cves, err
}

// readFeeds is ReadFeeds, also returning the winning records as read,
// with their facts and where they came from (in the same order), and each
// file's size and SHA-256. A record as read is kept compressed from the
// moment it wins, in spill unless it is nil (see nvdStore). The records'
// inputs are numbered as a manifest's: the i-th path is input i+1 (see
// readFeedsAt).
func readFeeds(paths []string, spill *os.File) ([]index.CVE, *nvdRecords, []FileInfo, error) {
	return readFeedsAt(paths, nil, spill, nil)
}

// readFeedsAt is readFeeds with the place of each path among the build's
// inputs (the index of its FileInfo in the manifest's Inputs; nil: the
// i-th path is input i+1), which the records' provenance names. With
// cold, each winning record's summary, CWEs and references go into it
// as read (see coldStore) rather than being held.
func readFeedsAt(paths []string, pos []int, spill *os.File, cold *coldStore) ([]index.CVE, *nvdRecords, []FileInfo, error) {
	store, err := newNVDStore(spill)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("loader: zstd: %w", err)
	}
	defer store.close()
	// The winners are held in slices, a place per CVE in the order
	// first read, and put in name order in place at the end: no record
	// is an object of its own, and the CVEs are never held twice (a
	// copy in name order beside the records as read was a fifth of the
	// build's peak).
	var (
		byID  = map[string]int32{}
		wins  []feedWinner
		cves  []index.CVE
		facts []index.NVDFacts
		zs    []nvdRef
		colds []coldRef
	)
	tab := newStrTab()
	infos := make([]FileInfo, len(paths))
	for i, p := range paths {
		at := int32(i + 1)
		if pos != nil {
			at = int32(pos[i])
		}
		fi, err := readFeed(p, func(fr *feedRecord) error {
			k, ok := byID[fr.cve.Name]
			if !ok {
				k = int32(len(wins))
				byID[fr.cve.Name] = k
				wins, cves, facts, zs = append(wins, feedWinner{}), append(cves, index.CVE{}), append(facts, index.NVDFacts{}), append(zs, nvdRef{})
				if cold != nil {
					colds = append(colds, coldRef{})
				}
			}
			if !wins[k].offer(fr.modified, recordHash(fr.nvd.Raw), at) {
				return nil
			}
			zs[k], fr.nvd.Raw = store.add(fr.nvd.Raw), nil
			if cold != nil {
				colds[k] = cold.put(&fr.cve)
			}
			tab.cve(&fr.cve)
			cves[k], facts[k] = fr.cve, fr.nvd.Facts
			return nil
		})
		if err != nil {
			return nil, nil, nil, err
		}
		infos[i] = fi
	}
	if err := store.close(); err != nil {
		return nil, nil, nil, fmt.Errorf("loader: spilling NVD's records: %w", err)
	}
	byID = nil
	from := make([]nvdFrom, len(wins))
	for k := range wins {
		from[k] = wins[k].from()
	}
	wins = nil
	// perm[i] is the place of the i-th CVE by name.
	perm := make([]int32, len(cves))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortFunc(perm, func(a, b int32) int { return strings.Compare(cves[a].Name, cves[b].Name) })
	// Each cycle of perm moves its records along: place j takes the
	// record at perm[j], the first one's saved.
	for i := range perm {
		if perm[i] < 0 {
			continue
		}
		c, f, z, fr := cves[i], facts[i], zs[i], from[i]
		var cr coldRef
		if cold != nil {
			cr = colds[i]
		}
		for j := i; ; {
			k := int(perm[j])
			perm[j] = -1
			if k == i {
				cves[j], facts[j], zs[j], from[j] = c, f, z, fr
				if cold != nil {
					colds[j] = cr
				}
				break
			}
			cves[j], facts[j], zs[j], from[j] = cves[k], facts[k], zs[k], from[k]
			if cold != nil {
				colds[j] = colds[k]
			}
			j = k
		}
	}
	perm = nil
	nvd := &nvdRecords{facts: facts, z: zs, from: from, spill: spill}
	if cold != nil {
		names := make([]string, len(cves))
		for i := range cves {
			names[i] = cves[i].Name
		}
		if err := cold.index(names, colds); err != nil {
			return nil, nil, nil, err
		}
	}
	return cves, nvd, infos, nil
}

// readFeed decodes the feed file at path, passing each record to emit,
// and returns the file's size and SHA-256.
func readFeed(path string, emit func(*feedRecord) error) (FileInfo, error) {
	return readFeedKnown(path, nil, emit)
}

// readFeedKnown is readFeed passing each record as read to known first
// (see decodeFeedKnown).
func readFeedKnown(path string, known func(raw []byte) bool, emit func(*feedRecord) error) (FileInfo, error) {
	rc, err := openInput(path)
	if err != nil {
		return FileInfo{}, err
	}
	defer rc.Close()
	if err := decodeFeedKnown(rc, path, known, emit); err != nil {
		return FileInfo{}, err
	}
	return rc.Sum()
}

// plural is n followed by one or many, as n asks: "1 CVE", "2 CVEs".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
