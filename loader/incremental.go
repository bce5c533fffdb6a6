package loader

// An incremental build: a build with Previous whose feeds are those the
// previous snapshot was built from (the same names in the same order),
// some of them changed (NVD's modified and recent feeds every two hours),
// decodes only the changed feeds and carries every other NVD record over
// from the previous snapshot's nvd.zst, with the same result, byte for
// byte, as reading every feed.
//
// A CVE's record is the winner over all feeds (the later lastModified,
// then the later input). What an unchanged feed still supplies when
// another changed is known from where each winner came from, which every
// build of format 8 stores beside the records (nvdfrom.txt.zst, a line
// per record): the inputs holding a record of the CVE with the winner's
// lastModified and bytes, or "c" (a clash) when an input holds one with
// that lastModified and other bytes. The unchanged feeds among them hold
// the winner as it was; when none does (the CVE was last in the old
// modified feed and nowhere else as such), the unchanged feeds' record
// of it is not known, and the build reads every feed.
//
// A carried record's facts are those the previous snapshot stores
// (nvdfacts.txt.zst: index.NVD.StoredFacts), which store again as they
// were; its CVE is the previous snapshot's (body and metrics) with what
// the details keep apart from them (status, KEV entry, the metrics'
// vectors and severities: index.Details.SetNVD).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/goccy/go-json"
	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

// nvdFactsFromLine is what a build with -previous reads of each of the
// previous snapshot's NVD records: its facts as stored (see
// index.NVD.StoredFacts), the block's frame size on a block's first
// record, and where the record came from (nvdfrom.txt.zst).
type nvdFactsFromLine struct {
	nvdFactsLine
	// From are the inputs (indexes into the manifest's Inputs, ascending)
	// holding a record of the CVE with the winner's lastModified and
	// bytes, the winner's own input last; empty when Clash.
	From []int32
	// Clash: an input holds a record of the CVE with the winner's
	// lastModified and other bytes.
	Clash bool
}

// nvdFrom is where a CVE's winning NVD record came from (see
// nvdFactsFromLine); neither In nor Clash: not known.
type nvdFrom struct {
	In    []int32
	Clash bool
}

// appendLine appends f's line of nvdfrom.txt.zst: the inputs, in
// decimal, separated by spaces; "c" for a clash; "-" when not known.
func (f nvdFrom) appendLine(dst []byte) []byte {
	switch {
	case f.Clash:
		return append(dst, 'c')
	case len(f.In) == 0:
		return append(dst, '-')
	}
	for k, at := range f.In {
		if k > 0 {
			dst = append(dst, ' ')
		}
		dst = strconv.AppendInt(dst, int64(at), 10)
	}
	return dst
}

// parseNVDFrom parses a line of nvdfrom.txt.zst (see appendLine) of a
// snapshot built from inputs inputs: each input a feed (1 to inputs-1,
// ascending).
func parseNVDFrom(line []byte, inputs int) (nvdFrom, error) {
	switch string(line) {
	case "c":
		return nvdFrom{Clash: true}, nil
	case "-":
		return nvdFrom{}, nil
	}
	var f nvdFrom
	for field := range bytes.SplitSeq(line, []byte{' '}) {
		at, err := parseInput(field, inputs, "a feed")
		switch {
		case err != nil:
			return nvdFrom{}, err
		case len(f.In) > 0 && at <= f.In[len(f.In)-1]:
			return nvdFrom{}, fmt.Errorf("inputs out of order: %q", line)
		}
		f.In = append(f.In, at)
	}
	return f, nil
}

// parseInput parses an input's number in a line of nvdfrom.txt.zst or
// cve5from.txt.zst: decimal without a leading zero, from 1 (input 0 is
// the CWE catalog) to inputs-1; what names the inputs allowed, for the
// error.
func parseInput(field []byte, inputs int, what string) (int32, error) {
	at, err := strconv.ParseInt(string(field), 10, 32)
	switch {
	case err != nil || len(field) > 1 && field[0] == '0':
		return 0, fmt.Errorf("bad input %q", field)
	case at < 1 || at >= int64(inputs):
		return 0, fmt.Errorf("input %d is not %s of the %d inputs", at, what, inputs)
	}
	return int32(at), nil
}

// feedWinner follows the records of one CVE as the feeds are read, in
// input order: the winner so far and where records like it are.
type feedWinner struct {
	rec      *feedRecord
	modified time.Time
	hash     recHash
	at       int32 // the winner's input
	// same is, in an incremental build, 1 + the previous snapshot's
	// record the winner is, byte for byte, when it was not decoded (rec
	// nil); 0 otherwise.
	same  int
	in    []int32
	clash bool
}

// offer takes the next record of the CVE, of lastModified mod, bytes of
// hash h, from input at, and reports whether it wins: a later
// lastModified, or the same (the record read later wins a tie).
func (w *feedWinner) offer(mod time.Time, h recHash, at int32) bool {
	switch {
	case len(w.in) == 0 && !w.clash || mod.After(w.modified):
		w.modified, w.hash, w.in, w.clash = mod, h, append(w.in[:0], at), false
	case mod.Equal(w.modified):
		switch {
		case h != w.hash:
			w.hash, w.clash, w.in = h, true, append(w.in[:0], at)
		case w.in[len(w.in)-1] != at:
			w.in = append(w.in, at)
		}
	default:
		return false
	}
	w.at = at
	return true
}

// from is where the winner came from; not known when its lastModified is
// finer than the millisecond the stored facts keep (NVD's are not), as
// the next build could not compare it with another record's.
func (w *feedWinner) from() nvdFrom {
	if w.modified.Nanosecond()%int(time.Millisecond) != 0 {
		return nvdFrom{}
	}
	if w.clash {
		return nvdFrom{Clash: true}
	}
	return nvdFrom{In: slices.Clip(w.in)}
}

var recordSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// recHash tells records' bytes apart within a build: two 64-bit hashes
// of them.
type recHash [2]uint64

func recordHash(raw []byte) recHash {
	return recHash{maphash.Bytes(recordSeeds[0], raw), maphash.Bytes(recordSeeds[1], raw)}
}

// incrementalFeeds is what an incremental build read of the feeds: as
// readFeeds, with the records already packed.
type incrementalFeeds struct {
	cves    []index.CVE
	nvd     *nvdPacked
	infos   []FileInfo
	changed int // feeds read
	carried int // records carried over
	// remapped of them were mapped again from the record, the others
	// taken from the previous snapshot's CVEs
	remapped int
	kept     int // blocks of nvd.zst kept as they were
	known    int // records of the changed feeds not decoded: -previous has them
	// bodies are, in the order of cves, the bodies of the CVEs carried
	// over as -previous stores them (nil for a CVE to encode): prev's
	// CVEs are not decoded (see readPrevious).
	bodies [][]byte
	// prev is the previous snapshot, read whole.
	prev *Snapshot
	// fallback: the feeds are to be read in full; only prev is set.
	fallback bool
	// records is, when CVE JSON 5 record files are inputs, what the
	// previous snapshot says they gave (see carryRecords).
	records *carriedRecords
}

// readFeedsIncremental reads the feeds of a build with Previous
// incrementally, when it can: nil or a fallback, and why not, otherwise
// ("" when there is no Previous). An error is one the full build would give too (a
// changed feed that does not decode); the previous snapshot's own
// problems are left to the full build to report.
func readFeedsIncremental(opt BuildOptions, feeds, records []string, aliases *Aliases, aliasSum string, enc *zstd.Encoder, stage func(name, detail string)) (*incrementalFeeds, string, error) {
	if opt.Previous == "" || opt.Full {
		return nil, "", nil
	}
	m, prevID, err := readManifest(opt.Previous, true)
	if err != nil {
		return nil, "", nil
	}
	if m.Version < 6 {
		return nil, fmt.Sprintf("the previous snapshot is of format %d, without NVD's records", m.Version), nil
	}
	if m.Version < 8 {
		return nil, fmt.Sprintf("the previous snapshot is of format %d, which does not say which feed each NVD record came from", m.Version), nil
	}
	// The CVE inputs are the manifest's after the CWE catalog, in the
	// order given, feeds and record files mixed (see inputsInOrder).
	inputs := len(opt.Feeds)
	was := len(m.Inputs) - 1 // the previous build's CVE inputs
	if m.EPSS != nil && was > 0 && m.Inputs[was].Name == m.EPSS.File {
		was--
	}
	pos := feedPositions(opt.Feeds, feeds) // each feed's input
	switch {
	case was == inputs:
	case len(records) == 0:
		return nil, fmt.Sprintf("the previous snapshot was built from %s, this build reads %s", plural(len(m.Inputs), "input", "inputs"), plural(len(feeds), "feed", "feeds")), nil
	case was < inputs && (len(pos) == 0 || pos[len(pos)-1] <= was):
		// Record files after the previous build's inputs (the
		// day's first delta after the midnight baseline): read.
	default:
		return nil, fmt.Sprintf("the previous snapshot was built from %s, this build reads %d", plural(was, "CVE input", "CVE inputs"), inputs), nil
	}
	infos := make([]FileInfo, len(feeds))
	unchanged := make([]bool, len(m.Inputs)) // by input
	var changed []int
	for i, p := range feeds {
		if was := m.Inputs[pos[i]]; was.Name != filepath.Base(p) {
			return nil, fmt.Sprintf("feed %d is %s, the previous snapshot's was %s", i+1, filepath.Base(p), was.Name), nil
		}
	}
	// The previous snapshot, which the build reads anyway: its CVEs are
	// those of the records carried over. Their bodies are kept as
	// stored, and carried over as such, when this vulnd writes them so
	// (a snapshot of its own format, which Validate checks to hold the
	// bodies this vulnd encodes); only those of the CVEs that changed
	// are decoded, for the diff. It is read while the inputs are hashed,
	// nvd.zst's facts read and the changed feeds decoded (below), which
	// do not need it: at 400k, 0.7, 1.4 and 1.3 s of work of the main
	// goroutine, one after the other before it was read.
	var (
		snap     *Snapshot
		snapErr  error
		prevCVE  map[string]int
		snapRead = make(chan struct{})
	)
	go func() {
		defer close(snapRead)
		if snap, snapErr = readPrevious(opt.Previous); snapErr != nil {
			return
		}
		prevCVE = make(map[string]int, len(snap.Data.CVEs))
		for i := range snap.Data.CVEs {
			prevCVE[snap.Data.CVEs[i].Name] = i
		}
	}()
	// waitSnap waits for the previous snapshot and says why the build
	// cannot go on with it ("": it can; "-": the full build says what
	// is wrong).
	waitSnap := func() string {
		<-snapRead
		switch {
		case snapErr != nil:
			return "-"
		case snap.ID != prevID:
			return "the previous snapshot changed while it was read"
		case m.Version != writeVersion:
			if err := snap.decodeAll(); err != nil {
				return "-"
			}
		}
		return ""
	}

	// early is a return before the previous snapshot is used: the read
	// is waited for (nothing is left running) and let go.
	var feedsRead chan struct{} // the changed feeds' read, when on a goroutine
	early := func(why string, err error) (*incrementalFeeds, string, error) {
		<-snapRead
		if feedsRead != nil {
			<-feedsRead
		}
		snap, prevCVE = nil, nil
		return nil, why, err
	}

	// The feeds are hashed on every core, and the record files with
	// them (see sameRecordInputs).
	hashed := make([]bool, len(feeds))
	recordInfos := make([]FileInfo, len(records))
	recordHashed := make([]error, len(records))
	index.OnCores(len(feeds)+len(records), func() func(int) error {
		return func(i int) error {
			if i >= len(feeds) {
				r := i - len(feeds)
				fi, ok, err := hashFile(records[r])
				if err == nil && !ok {
					err = errors.New("not a regular file")
				}
				recordInfos[r], recordHashed[r] = fi, err
				return nil
			}
			fi, ok, err := hashFile(feeds[i])
			infos[i], hashed[i] = fi, ok && err == nil
			return nil
		}
	})
	recordInfo := func(p string) (FileInfo, error) {
		if k := slices.Index(records, p); k >= 0 {
			return recordInfos[k], recordHashed[k]
		}
		return FileInfo{}, errors.New("not a record file")
	}
	for i, p := range feeds {
		was := m.Inputs[pos[i]]
		if !hashed[i] {
			return early(fmt.Sprintf("%s is not a regular file", p), nil)
		}
		fi := infos[i]
		if fi.Size == was.Size && fi.SHA256 == was.SHA256 {
			unchanged[pos[i]] = true
		} else {
			changed = append(changed, i)
		}
	}
	// The changed feeds, in order, as readFeeds reads them.
	var prev *previousNVD // nvd.zst's facts (below)
	byID := map[string]*feedWinner{}
	known := 0 // records of them not decoded
	var knownErr, feedErr error
	readChanged := func(byHash map[recHash]int) {
		prevMod := func(j int) (time.Time, error) { return parseNVDTime(prev.lines[j].LastModified) }
		for _, i := range changed {
			at := int32(pos[i])
			var isKnown func(raw []byte) bool
			if byHash != nil {
				isKnown = func(raw []byte) bool {
					h := recordHash(raw)
					j, ok := byHash[h]
					if !ok {
						return false
					}
					mod, err := prevMod(j)
					if err != nil {
						knownErr = err
						return false
					}
					id := prev.lines[j].ID
					w := byID[id]
					if w == nil {
						w = &feedWinner{}
						byID[id] = w
					}
					if w.offer(mod, h, at) {
						w.rec, w.same = nil, 1+j
					}
					known++
					return true
				}
			}
			fi, err := readFeedKnown(feeds[i], isKnown, func(fr *feedRecord) error {
				w := byID[fr.cve.Name]
				if w == nil {
					w = &feedWinner{}
					byID[fr.cve.Name] = w
				}
				if w.offer(fr.modified, recordHash(fr.nvd.Raw), at) {
					fr.nvd.Raw = bytes.Clone(fr.nvd.Raw)
					w.rec, w.same = fr, 0
				}
				return nil
			})
			if err != nil {
				feedErr = err
				return
			}
			if knownErr != nil {
				return
			}
			infos[i] = fi
		}
	}
	// The changed feeds are read while nvd.zst's facts are (below),
	// unless they are a large share of the feeds (a new day): their
	// records are then looked up among the previous snapshot's by their
	// bytes, which takes its facts.
	changedBytes, all := feedBytes(infos, changed)
	byRecord := changedBytes > all/10
	if !byRecord {
		feedsRead = make(chan struct{})
		go func() {
			defer close(feedsRead)
			readChanged(nil)
		}()
	}
	var rf recordFiles
	if len(records) == 0 {
		if m.Newest != nil && m.Newest.CVE5 != nil || m.Aliases != "" {
			return early("the previous snapshot holds CVE JSON 5 records", nil)
		}
	} else {
		if m.Version < cve5FromVersion || m.Version != writeVersion {
			return early(fmt.Sprintf("the previous snapshot is of format %d, which does not say which input each CVE JSON 5 record came from", m.Version), nil)
		}
		var why string
		if rf, why = sameRecordInputs(opt.Feeds, pos, was, m, aliasSum, recordInfo); why != "" {
			return early(why, nil)
		}
	}
	var why string
	if prev, why = readPreviousNVD(opt.Previous, m, inputs); prev == nil {
		return early(why, nil)
	}
	// The records of the previous snapshot by their bytes, when the
	// changed feeds are a large share of the feeds (a new day, when NVD
	// writes every yearly feed again): a record read again as it was is
	// not decoded again.
	var prevHash []recHash
	var byHash map[recHash]int
	if byRecord {
		if prevHash, err = prev.hashes(); err != nil {
			switch why := waitSnap(); why {
			case "":
				return nil, "", err
			case "-":
				return nil, "", nil // the full build says what is wrong
			default:
				return nil, why, nil
			}
		}
		byHash = make(map[recHash]int, len(prevHash))
		for j, h := range prevHash {
			byHash[h] = j
		}
	}

	if feedsRead != nil {
		<-feedsRead
		feedsRead = nil
	} else {
		readChanged(byHash)
	}
	// The previous snapshot's problems first, as when it was read
	// before the feeds.
	switch why := waitSnap(); why {
	case "":
	case "-":
		return nil, "", nil // the full build says what is wrong
	default:
		return nil, why, nil
	}
	stage("read previous", plural(len(snap.Data.CVEs), "CVE", "CVEs")+", "+plural(len(snap.Data.Reports), "report", "reports"))
	// From here, a build that reads every feed has the previous snapshot
	// read already, whole.
	fallback := func(why string) (*incrementalFeeds, string, error) {
		if err := snap.decodeAll(); err != nil {
			return nil, "", nil // the full build says what is wrong
		}
		return &incrementalFeeds{prev: snap, fallback: true}, why, nil
	}
	if feedErr != nil {
		return nil, "", feedErr
	}
	if knownErr != nil {
		return fallback(fmt.Sprintf("the previous snapshot's %s: %v", fileNVDFacts, knownErr))
	}

	// Each CVE's winner: carried over (prev index) or read now.
	type winner struct {
		id    string
		prev  int // -1: rec
		rec   *feedRecord
		from  nvdFrom
		facts *index.NVDFacts
	}
	wins := make([]winner, 0, len(prev.lines)+len(byID))
	var unresolved []string
	for j := range prev.lines {
		old := &prev.lines[j]
		c := byID[old.ID]
		delete(byID, old.ID)
		mW, err := parseNVDTime(old.LastModified)
		if err != nil {
			return fallback(fmt.Sprintf("the previous snapshot's record of %s: lastModified: %v", old.ID, err))
		}
		var u []int32 // the unchanged inputs holding the winner
		for _, at := range old.From {
			if unchanged[at] {
				u = append(u, at)
			}
		}
		carried := winner{id: old.ID, prev: j, from: nvdFrom{In: u}, facts: &old.NVDFacts}
		fresh := func(from nvdFrom) winner {
			return winner{id: old.ID, prev: -1, rec: c.rec, from: from, facts: &c.rec.nvd.Facts}
		}
		// sameBytes: the changed feeds' winner is the previous one, byte
		// for byte.
		sameBytes := func() (bool, error) {
			if c.same > 0 {
				return c.same-1 == j, nil
			}
			if prevHash != nil {
				return c.hash == prevHash[j], nil
			}
			raw, err := prev.raw(j)
			return bytes.Equal(raw, c.rec.nvd.Raw), err
		}
		switch {
		case c == nil || c.modified.Before(mW):
			// The unchanged feeds' record is the winner, if they hold it.
			if old.Clash || len(u) == 0 {
				unresolved = append(unresolved, old.ID)
				break
			}
			wins = append(wins, carried)
		case c.modified.After(mW) && c.rec != nil:
			// Newer than anything the unchanged feeds hold.
			wins = append(wins, fresh(c.from()))
		case c.modified.After(mW) || old.Clash:
			// An unchanged feed may hold another record as recent.
			unresolved = append(unresolved, old.ID)
		default:
			// Both at the winner's lastModified.
			same, err := sameBytes()
			if err != nil {
				return nil, "", err
			}
			switch {
			case same:
				// The same record again (NVD's modified feed holds
				// records of the yearly ones, and a new day's yearly
				// feeds those of the day before): carried over,
				// whichever input wins.
				carried.from = nvdFrom{In: mergeSorted(u, c.in)}
				if c.clash {
					carried.from = nvdFrom{Clash: true}
				}
				wins = append(wins, carried)
			case c.rec == nil:
				unresolved = append(unresolved, old.ID)
			case len(u) == 0:
				// The unchanged feeds hold only older records of it.
				wins = append(wins, fresh(c.from()))
			case c.at > u[len(u)-1]:
				wins = append(wins, fresh(nvdFrom{Clash: true}))
			default:
				carried.from = nvdFrom{Clash: true}
				wins = append(wins, carried)
			}
		}
	}
	if len(unresolved) > 0 {
		slices.Sort(unresolved)
		return fallback(fmt.Sprintf("%s (%s) last came from a feed that changed, with no record as recent now: which record the unchanged feeds hold is not known",
			plural(len(unresolved), "CVE", "CVEs"), strings.Join(unresolved[:min(3, len(unresolved))], ", ")))
	}
	for id, c := range byID { // CVEs new to the feeds
		if c.rec == nil {
			return fallback("the changed feeds hold a record of the previous snapshot under another name")
		}
		wins = append(wins, winner{id: id, prev: -1, rec: c.rec, from: c.from(), facts: &c.rec.nvd.Facts})
	}

	// nvd.zst's order, and the blocks that are as they were.
	order := index.NVDOrder(len(wins), func(i int) *index.NVDFacts { return wins[i].facts })
	// Laid out over the previous snapshot's records (the carried ones
	// keep their places: see nvdlayout.go), or compactly, each block of
	// the previous snapshot that holds the records of a block as they
	// are kept.
	keptFrom := make([]int, len(order)) // the previous record each keeps the place of
	for k, i := range order {
		keptFrom[k] = wins[i].prev
	}
	overlay := planOverlay(prev.lay, keptFrom)
	per := index.NVDBlockRecords
	nb := (len(order) + per - 1) / per
	keep := make([]int, nb) // the previous block kept, -1: none
	blockOf := make([]int, len(wins))
	for b := range nb {
		from, to := b*per, min((b+1)*per, len(order))
		keep[b] = -1
		if p := wins[order[from]].prev; !overlay && p >= 0 {
			pb := prev.lay.Places[p].Block
			ok := len(prev.owners[pb]) == to-from
			for k := from; k < to && ok; k++ {
				q := wins[order[k]].prev
				ok = q >= 0 && prev.lay.Places[q] == index.NVDPlace{Block: pb, Slot: uint16(k - from)}
			}
			if ok {
				keep[b] = int(pb)
			}
		}
		for k := from; k < to; k++ {
			blockOf[order[k]] = b
		}
	}
	// A block is kept only if compressing it again gives its frame: the
	// previous snapshot may come from a vulnd that compressed otherwise.
	if b := slices.IndexFunc(keep, func(k int) bool { return k >= 0 }); b >= 0 {
		data, err := prev.block(keep[b])
		if err == nil && !bytes.Equal(enc.EncodeAll(data, nil), prev.frame(keep[b])) {
			for i := range keep {
				keep[i] = -1
			}
		}
	}
	posOf := make([]int, len(prev.lines)) // the winner of each carried record
	for i := range posOf {
		posOf[i] = -1
	}
	for i := range wins {
		if wins[i].prev >= 0 {
			posOf[wins[i].prev] = i
		}
	}

	// The carried records' CVEs: the previous snapshot's, with what its
	// details say of the record (status, KEV entry, the metrics' vectors
	// and severities); mapped again from the record (as read from
	// nvd.zst) where they do not say all. Their facts are those the
	// previous snapshot stores (index.NVD.StoredFacts), which store again
	// as they were. The records going into a new block are taken as read
	// too.
	cves := make([]index.CVE, len(wins))
	bodies := make([][]byte, len(wins)) // a carried CVE's body as stored
	facts := make([]index.NVDFacts, len(wins))
	raws := make([][]byte, len(wins))
	decoded := make([]int, nb)
	needRaw := make([]bool, len(prev.lines))
	for i := range wins {
		j := wins[i].prev
		if j < 0 {
			continue
		}
		facts[i] = prev.lines[j].NVDFacts
		k, ok := prevCVE[wins[i].id]
		if ok {
			cves[i], ok = carriedCVE(snap, k, wins[i].id)
		}
		if ok && snap.bodies != nil {
			bodies[i] = snap.bodies[k]
		}
		needRaw[j] = !ok || !overlay && keep[blockOf[i]] < 0
	}
	for b, k := range keep {
		if k < 0 {
			continue
		}
		var h zstd.Header
		if err := h.Decode(prev.frame(k)); err == nil && h.HasFCS {
			decoded[b] = int(h.FrameContentSize)
		} else {
			needRaw[prev.owners[k][0]] = true // a block kept holds no dead line
		}
	}
	var remapped atomic.Int64
	errs := index.OnCores(len(prev.owners), func() func(int) error {
		return func(pb int) error {
			if !slices.ContainsFunc(prev.owners[pb], func(j int32) bool { return j >= 0 && needRaw[j] }) {
				return nil
			}
			return prev.eachRecord(pb, func(j int, raw []byte, size int) error {
				i := posOf[j]
				if i < 0 || !needRaw[j] {
					return nil
				}
				if b := blockOf[i]; overlay {
				} else if keep[b] < 0 {
					raws[i] = bytes.Clone(raw)
				} else if order[b*per] == i {
					decoded[b] = size
				}
				if cves[i].Name != "" {
					return nil
				}
				var n nvdCVE
				if err := json.Unmarshal(raw, &n); err != nil {
					return fmt.Errorf("record of %s: %w", prev.lines[j].ID, err)
				}
				fr, err := mapCVE(&n)
				if err != nil {
					return fmt.Errorf("record of %s: %w", prev.lines[j].ID, err)
				}
				if n.ID != prev.lines[j].ID {
					return fmt.Errorf("record %d is %s, its facts say %s", j+1, n.ID, prev.lines[j].ID)
				}
				cves[i], facts[i] = fr.cve, nvdFacts(&n)
				remapped.Add(1)
				return nil
			})
		}
	})
	if err := index.FirstError(errs); err != nil {
		return nil, "", fmt.Errorf("loader: -previous %s: %s: %w", opt.Previous, fileNVD, err)
	}
	carried := 0
	for i := range wins {
		if wins[i].prev < 0 {
			cves[i], facts[i], raws[i] = wins[i].rec.cve, wins[i].rec.nvd.Facts, wins[i].rec.nvd.Raw
		} else {
			carried++
		}
	}
	// What the CVE JSON 5 records gave, from the previous snapshot: the
	// record files are those it was built from.
	names := make([]string, len(wins), len(wins)+max(0, len(snap.Data.CVEs)-len(prev.lines)))
	for i := range wins {
		names[i] = wins[i].id
	}
	var recs *carriedRecords
	if len(records) > 0 {
		// Each winner's CVE in the previous snapshot (-1: none).
		prevAt := make([]int, len(wins))
		for i := range wins {
			k, ok := prevCVE[wins[i].id]
			if !ok {
				k = -1
			}
			prevAt[i] = k
		}
		var why string
		if recs, names, cves, bodies, why, err = carryRecords(snap, prev, names, prevAt, cves, bodies, rf, aliases); err != nil {
			return nil, "", err
		}
		if why != "" {
			return fallback(why)
		}
		stage("carry CVE JSON 5 records", plural(recs.held, "CVE", "CVEs")+" with what a record gave, "+strconv.Itoa(recs.only)+" of them from a record alone; "+
			plural(len(rf.changed), "record file", "record files")+" read ("+plural(recs.read, "record", "records")+", "+strconv.Itoa(len(recs.fresh))+" of them taken)")
	}

	if overlay {
		sorted := make([]index.NVDFacts, len(order))
		from := make([]nvdFrom, len(order))
		var delta []index.NVDFacts
		var deltaOf []int // the winner of each of delta
		for k, i := range order {
			sorted[k], from[k] = facts[i], wins[i].from
			if keptFrom[k] < 0 {
				delta, deltaOf = append(delta, facts[i]), append(deltaOf, i)
			}
		}
		p, keptFile, err := packOverlay(prev, sorted, keptFrom, delta, func(d int, dst []byte) ([]byte, error) {
			return append(dst, raws[deltaOf[d]]...), nil
		}, enc)
		if err != nil {
			return nil, "", fmt.Errorf("loader: build %s: %w", opt.Out, err)
		}
		return &incrementalFeeds{cves: cvesByName(func(i int) string { return names[i] }, cves, bodies), bodies: bodies, records: recs, nvd: &nvdPacked{PackedNVD: p, from: from, kept: keptFile}, infos: infos, prev: snap,
			changed: len(changed), carried: carried, remapped: int(remapped.Load()), kept: len(prev.lay.Blocks), known: known}, "", nil
	}

	// The blocks: kept, or compressed as index.PackNVD does.
	p := &index.PackedNVD{Facts: make([]index.NVDFacts, len(order)), Blocks: make([]index.NVDBlock, nb), Frames: make([][]byte, nb), Decoded: decoded}
	from := make([]nvdFrom, len(order))
	for k, i := range order {
		p.Facts[k], from[k] = facts[i], wins[i].from
	}
	errs = index.OnCores(nb, func() func(int) error {
		var buf, frame []byte
		return func(b int) error {
			from, to := b*per, min((b+1)*per, len(order))
			p.Blocks[b].Records = to - from
			if keep[b] >= 0 {
				p.Frames[b] = prev.frame(keep[b])
				p.Blocks[b].Size = len(p.Frames[b])
				return nil
			}
			buf = buf[:0]
			for _, i := range order[from:to] {
				if bytes.IndexByte(raws[i], nvdNewline) >= 0 {
					return fmt.Errorf("%w: NVD record of %s holds byte 0x1F", index.ErrInvalid, wins[i].id)
				}
				start := len(buf)
				buf = append(buf, raws[i]...)
				for k := start; k < len(buf); k++ {
					if buf[k] == '\n' {
						buf[k] = nvdNewline
					}
				}
				buf = append(buf, '\n')
			}
			frame = enc.EncodeAll(buf, frame[:0])
			p.Frames[b] = slices.Clone(frame)
			p.Blocks[b].Size = len(p.Frames[b])
			p.Decoded[b] = len(buf)
			return nil
		}
	})
	if err := index.FirstError(errs); err != nil {
		return nil, "", fmt.Errorf("loader: build %s: %w", opt.Out, err)
	}
	kept := 0
	for _, k := range keep {
		if k >= 0 {
			kept++
		}
	}
	return &incrementalFeeds{cves: cvesByName(func(i int) string { return names[i] }, cves, bodies), bodies: bodies, records: recs, nvd: &nvdPacked{PackedNVD: p, from: from}, infos: infos, prev: snap,
		changed: len(changed), carried: carried, remapped: int(remapped.Load()), kept: kept, known: known}, "", nil
}

// cvesByName are the CVEs of the winners (cves in the order of wins)
// in the order readFeeds gives them: by name. bodies, in the order of
// cves, are put in the same order, in place.
func cvesByName(id func(i int) string, cves []index.CVE, bodies [][]byte) []index.CVE {
	byName := make([]int, len(cves))
	for i := range byName {
		byName[i] = i
	}
	sort.Slice(byName, func(a, b int) bool { return id(byName[a]) < id(byName[b]) })
	out := make([]index.CVE, len(cves))
	sorted := make([][]byte, len(bodies))
	for k, i := range byName {
		out[k] = cves[i]
		if bodies != nil {
			sorted[k] = bodies[i]
		}
	}
	copy(bodies, sorted)
	return out
}

// carriedCVE is the CVE a record maps to, from the previous snapshot's
// CVE k (its body and metrics) and its details (status, KEV entry, the
// metrics' vectors and severities); false when they do not give all of
// it (details that are not the CVE's, or a CVE with a CVE JSON 5
// record's entries).
func carriedCVE(prev *Snapshot, k int, id string) (index.CVE, bool) {
	c := prev.Data.CVEs[k]
	if c.Name != id || c.Affected != nil || c.SSVC != nil || c.EntryKeys != nil || prev.details == nil || k >= prev.details.Len() {
		return index.CVE{}, false
	}
	if !prev.details.SetNVD(k, &c) {
		return index.CVE{}, false
	}
	return c, true
}

// feedBytes is the size of the feeds changed (indexes into infos) and of
// all of them.
func feedBytes(infos []FileInfo, changed []int) (some, all int64) {
	for _, i := range changed {
		some += infos[i].Size
	}
	for _, fi := range infos {
		all += fi.Size
	}
	return some, all
}

// mergeSorted merges two ascending lists of inputs, once each.
func mergeSorted(a, b []int32) []int32 {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// hashFile is the FileInfo of a regular file, as a build's manifest
// gives it; ok is false for anything else (a pipe cannot be read twice).
func hashFile(path string) (FileInfo, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileInfo{}, false, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return FileInfo{}, false, err
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return FileInfo{}, false, err
	}
	return FileInfo{Name: filepath.Base(path), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, true, nil
}

// previousNVD are the NVD records of the previous snapshot: their facts
// lines, nvd.zst still compressed, and where each record is in it.
type previousNVD struct {
	lines  []nvdFactsFromLine
	data   []byte
	blocks []int64 // block b is data[blocks[b]:blocks[b+1]]
	lay    *index.NVDLayout
	owners [][]int32 // by block, by line: the record there, -1 for none
	dec    *zstd.Decoder
	dir    string   // the snapshot
	fi     FileInfo // its nvd.zst
}

// readPreviousNVD reads the NVD records of the snapshot in dir (manifest
// m of format 8 on, built from feeds feeds and maybe EPSS), with where
// each came from: nil and why not when they cannot be carried over.
func readPreviousNVD(dir string, m Manifest, feeds int) (*previousNVD, string) {
	dec, err := decoder()
	if err != nil {
		return nil, err.Error()
	}
	if fi := m.Files[keyNVDFrom]; fi.Records != m.Files[keyNVDFacts].Records {
		return nil, fmt.Sprintf("the previous snapshot's %s: %d records for %d NVD records", fileNVDFrom, fi.Records, m.Files[keyNVDFacts].Records)
	}
	from := make([]nvdFrom, m.Files[keyNVDFrom].Records)
	unknown := 0
	if err := eachRecord(dir, m.Files[keyNVDFrom], dec, func(n int, line []byte) error {
		f, err := parseNVDFrom(line, 1+feeds)
		from[n] = f
		return err
	}); err != nil {
		return nil, fmt.Sprintf("the previous snapshot's %s: %v", fileNVDFrom, err)
	}
	for _, f := range from {
		if f.In == nil && !f.Clash {
			unknown++
		}
	}
	if unknown > 0 {
		return nil, fmt.Sprintf("the previous snapshot does not say which feed %s came from", plural(unknown, "NVD record", "NVD records"))
	}
	p, why := readPreviousStore(dir, m)
	if p == nil {
		return nil, why
	}
	for i := range p.lines {
		p.lines[i].From, p.lines[i].Clash = from[i].In, from[i].Clash
	}
	return p, ""
}

// readPreviousStore reads the NVD records of the snapshot in dir
// (manifest m of format 7 on): nil and why not when they cannot be read.
func readPreviousStore(dir string, m Manifest) (*previousNVD, string) {
	dec, err := decoder()
	if err != nil {
		return nil, err.Error()
	}
	wrap := func(key string, err error) error { return fmt.Errorf("%s: %w", m.Files[key].Name, err) }
	l, lay, err := parseNVDFacts(dir, m, dec, wrap)
	if err != nil {
		return nil, "the previous snapshot's " + err.Error()
	}
	p := &previousNVD{dec: dec, dir: dir, fi: m.Files[keyNVD]}
	if p.data, err = readChecked(dir, p.fi); err != nil {
		return nil, fmt.Sprintf("the previous snapshot's %s: %v", fileNVD, err)
	}
	n, err := l.NVD(p.data)
	if err != nil {
		return nil, fmt.Sprintf("the previous snapshot's %s: %v", fileNVDFacts, err)
	}
	lines := make([]nvdFactsFromLine, n.Len())
	for i := range lines {
		l := &lines[i]
		l.NVDFacts, l.Frame = n.StoredFacts(i)
	}
	if lay == nil {
		// The compact layout (format 8 and 7): a block starts at each
		// record with a frame size.
		var blocks []index.NVDBlock
		for i := range lines {
			switch {
			case lines[i].Frame > 0:
				blocks = append(blocks, index.NVDBlock{Size: lines[i].Frame, Records: 1})
			case i == 0:
				return nil, "the previous snapshot's " + fileNVDFacts + ": record 1 starts no block"
			default:
				blocks[len(blocks)-1].Records++
			}
		}
		lay = index.CompactNVDLayout(blocks)
	}
	p.lines, p.lay = lines, lay
	p.owners = make([][]int32, len(lay.Blocks))
	p.blocks = make([]int64, 1, len(lay.Blocks)+1)
	for b, blk := range lay.Blocks {
		p.owners[b] = make([]int32, blk.Records)
		for s := range p.owners[b] {
			p.owners[b][s] = -1
		}
		p.blocks = append(p.blocks, p.blocks[b]+int64(blk.Size))
	}
	for j, pl := range lay.Places {
		p.owners[pl.Block][pl.Slot] = int32(j)
	}
	return p, ""
}

func (p *previousNVD) frame(b int) []byte { return p.data[p.blocks[b]:p.blocks[b+1]:p.blocks[b+1]] }

// block is block b decompressed: its records, "\n" in them as 0x1F,
// each followed by "\n".
func (p *previousNVD) block(b int) ([]byte, error) {
	return p.dec.DecodeAll(p.frame(b), nil)
}

// eachRecord passes each record of block b (dead lines skipped), as read
// (with its "\n"), with its number and the block's decompressed size, to
// fn.
func (p *previousNVD) eachRecord(b int, fn func(j int, raw []byte, size int) error) error {
	data, err := p.block(b)
	if err != nil {
		return fmt.Errorf("block %d: %w", b+1, err)
	}
	rest := data
	for s, j := range p.owners[b] {
		line, after, ok := bytes.Cut(rest, []byte{'\n'})
		if !ok {
			return fmt.Errorf("block %d: %d lines, its layout gives %d", b+1, s, len(p.owners[b]))
		}
		rest = after
		if j < 0 {
			continue
		}
		for k := range line {
			if line[k] == nvdNewline {
				line[k] = '\n'
			}
		}
		if err := fn(int(j), line, len(data)); err != nil {
			return err
		}
	}
	if len(rest) > 0 {
		return fmt.Errorf("block %d: more than the %d lines its layout gives", b+1, len(p.owners[b]))
	}
	return nil
}

// hashes are the records' hashes (recordHash), computed on every core.
func (p *previousNVD) hashes() ([]recHash, error) {
	out := make([]recHash, len(p.lines))
	errs := index.OnCores(len(p.owners), func() func(int) error {
		return func(b int) error {
			return p.eachRecord(b, func(j int, raw []byte, _ int) error {
				out[j] = recordHash(raw)
				return nil
			})
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("loader: -previous: %s: %w", fileNVD, err)
	}
	return out, nil
}

// raw is record j as read.
func (p *previousNVD) raw(j int) ([]byte, error) {
	var out []byte
	err := p.eachRecord(int(p.lay.Places[j].Block), func(k int, raw []byte, _ int) error {
		if k == j {
			out = slices.Clone(raw)
		}
		return nil
	})
	if err == nil && out == nil {
		err = errors.New("not found")
	}
	if err != nil {
		return nil, fmt.Errorf("loader: -previous: %s: record %d: %w", fileNVD, j+1, err)
	}
	return out, nil
}

// nvdNewline stands for "\n" inside a record of nvd.zst (see
// index.PackNVD).
const nvdNewline = 0x1F

// readChecked reads a data file whole, undecoded, checking each chunk's
// sum.
func readChecked(dir string, fi FileInfo) ([]byte, error) {
	f, err := openData(dir, fi)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, fi.Size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	// The chunks' sums are checked on every core.
	offs := make([]int64, len(fi.Chunks)+1)
	for i, c := range fi.Chunks {
		offs[i+1] = offs[i] + c.Size
	}
	errs := index.OnCores(len(fi.Chunks), func() func(int) error {
		return func(i int) error {
			if err := checkSum(data[offs[i]:offs[i+1]], fi.Chunks[i].SHA256); err != nil {
				return fmt.Errorf("chunk %d: %w", i+1, err)
			}
			return nil
		}
	})
	if err := index.FirstError(errs); err != nil {
		return nil, err // the first chunk's
	}
	return data, nil
}
