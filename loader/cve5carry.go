package loader

// A build with -previous whose CVE JSON 5 record files are those the
// previous snapshot was built from (the same names at the same places
// among the inputs, the same sizes and SHA-256), and whose alias file is
// the same, takes what the records gave from the previous snapshot
// rather than reading them again (NVD's two-hourly refresh between the
// CVE Program's deltas): the same records give each CVE what they gave
// it before. Of a record a build takes, for a CVE of NVD, its affected
// entries and SSVC decision, which the details keep as texts, with the
// entry keys they give a CVE without NVD CPEs (see mergeCVE5 and
// setEntryKeys); for a CVE NVD lacks, the whole CVE, served from the
// record. So:
//   - a CVE of NVD whose record in the feeds is unchanged keeps its body
//     and details line as they were (its texts taken by id from the
//     previous snapshot's table: see textscarry.go);
//   - a CVE of NVD whose record changed takes its affected entries and
//     SSVC decision from the previous details, and entry keys by the new
//     record's CPEs: none when it has some; when it has none, those of
//     before, or, when the previous one had CPEs (so no keys were
//     stored), the keys of the entries as the details keep them, unless
//     an entry would take its product from its packageName, which the
//     details do not keep (the build then reads the records);
//   - a CVE the previous snapshot served from its record alone is
//     carried whole while NVD lacks it; once NVD has it, it is NVD's CVE
//     with what the record gave, as above.
// Where each CVE's record came from, and its dateUpdated, which the
// refresh guard compares, are those of the previous snapshot's
// cve5from.txt.zst.
//
// A record file replaced by another at its place (the CVE Program's
// hourly delta, which replaces the one before under another name and
// holds every record changed since midnight), or changed, is read whole;
// the others are not. Each CVE's winning record is then decided as a
// full read decides it (mergeCVE5Sorted: the later dateUpdated, on a tie
// the record read later) from where the previous snapshot's came from
// (cve5from.txt.zst): a record of the files read wins over one of an
// unchanged file when it is later, or as late and read later; over one
// of a file replaced, when it is later or as late and at or after that
// file's place (an unchanged file's record as late comes before it, or
// it would have won before). A CVE whose record came from a file
// replaced, and that no record of the files read supersedes, is not
// known (the unchanged files may hold an older record of it): the build
// reads every record file, and says which CVEs. A CVE whose record is
// read anew takes it as a full build does (its NVD CVE decoded from the
// previous snapshot when its body was carried over, the diff comparing
// its entries).

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/vulnd/vulnd/index"
)

// carriedRecords is what a build takes of the CVE JSON 5 records from
// the previous snapshot (see carryRecords).
type carriedRecords struct {
	// infos are the record files' FileInfos, in the order given.
	infos []FileInfo
	// prevFrom is, by CVE of the previous snapshot, where its record
	// came from (its cve5from.txt.zst).
	prevFrom []recordFrom
	// nvd is the newest updated_at of NVD's CVEs (nil: none), the
	// manifest's newest.nvd (see inputDates).
	nvd *string
	// held CVEs took what a record gave, only of them from a record
	// alone; read records were read, of the record files changed.
	held, only, read int
	// fresh are where the records read that win came from, by CVE.
	fresh map[string]recordFrom
	// texts is the previous snapshot's text table, which the carried
	// CVEs' texts (index.HeldFrom) are taken from by id.
	texts *prevTexts
}

// aliasesSum is the SHA-256 of an alias file's bytes, hex, which a
// manifest gives (Manifest.Aliases).
func aliasesSum(text []byte) string {
	h := sha256.Sum256(text)
	return hex.EncodeToString(h[:])
}

// recordFiles are the build's record files as against the previous
// snapshot's: infos, every file's FileInfo in the order given; changed,
// the paths of those that are not the previous snapshot's (another name
// at the place, other bytes, or a file after the previous build's
// inputs), read whole, at the inputs at.
type recordFiles struct {
	infos   []FileInfo
	changed []string
	at      []int
}

// sameRecordInputs compares the record files among paths (the build's
// CVE inputs; pos are the feeds' places among the manifest's inputs)
// with m's inputs at the same places (its first was CVE inputs; those
// after them are new), and checks that the alias file (aliasSum) is
// m's: why not when the records are to be read in full. info is each
// record file's FileInfo (hashFile's; an error for one that is not a
// regular file).
func sameRecordInputs(paths []string, pos []int, was int, m Manifest, aliasSum string, info func(path string) (FileInfo, error)) (recordFiles, string) {
	var rf recordFiles
	n := 0
	for k, p := range paths {
		at := 1 + k
		if n < len(pos) && pos[n] == at {
			n++
			continue
		}
		fi, err := info(p)
		if err != nil {
			return recordFiles{}, fmt.Sprintf("%s is not a regular file", p)
		}
		if at > was || fi.Name != m.Inputs[at].Name || fi.Size != m.Inputs[at].Size || fi.SHA256 != m.Inputs[at].SHA256 {
			rf.changed, rf.at = append(rf.changed, p), append(rf.at, at)
		}
		rf.infos = append(rf.infos, fi)
	}
	switch m.Aliases {
	case "": // format 11 on: a build that read no record
		return recordFiles{}, "the previous snapshot was built without CVE JSON 5 records"
	case aliasSum:
	default:
		return recordFiles{}, "the alias file is not the one the previous snapshot was built with"
	}
	var changed, all int64
	for k, fi := range rf.infos {
		all += fi.Size
		if slices.Contains(rf.at, recordAt(paths, pos, k)) {
			changed += fi.Size
		}
	}
	if changed > all/10 {
		// A new day's baseline: the records are read as a full build
		// reads them (only what it keeps of each), not whole.
		return recordFiles{}, fmt.Sprintf("the CVE JSON 5 record files changed are %d %% of their bytes (a new baseline?): read as a full build reads them", changed*100/all)
	}
	return rf, ""
}

// recordAt is the input of the k-th record file among paths (the
// build's CVE inputs; pos are the feeds' inputs).
func recordAt(paths []string, pos []int, k int) int {
	n := 0
	for i := range paths {
		if n < len(pos) && pos[n] == 1+i {
			n++
			continue
		}
		if k == 0 {
			return 1 + i
		}
		k--
	}
	return -1
}

// carryRecords gives the CVEs of NVD's records (cves, named names, the
// bodies carried over in bodies) what the records gave them in the
// previous snapshot snap (its NVD records prev), and adds the CVEs it
// served from a record alone that NVD still lacks, with their bodies as
// stored; the record files rf.changed are read, their records taken as
// a full read takes them (see above): the CVEs' names, the CVEs and
// their bodies, extended. The texts carried are named by their ids in
// the previous snapshot's table (index.HeldFrom, rc.texts). why says why the records are to be read in full
// ("": they need not); an error is one of a record file read, as the
// full build gives it.
func carryRecords(snap *Snapshot, prev *previousNVD, names []string, prevAt []int, cves []index.CVE, bodies [][]byte, rf recordFiles, aliases *Aliases) (*carriedRecords, []string, []index.CVE, [][]byte, string, error) {
	fail := func(err error) (*carriedRecords, []string, []index.CVE, [][]byte, string, error) {
		return nil, nil, nil, nil, "", fmt.Errorf("loader: -previous %s: %w", snap.Dir, err)
	}
	not := func(why string) (*carriedRecords, []string, []index.CVE, [][]byte, string, error) {
		return nil, nil, nil, nil, why, nil
	}
	d := snap.details
	if d == nil || snap.bodies == nil || d.Len() != len(snap.Data.CVEs) {
		return not("the previous snapshot's details or bodies are not those a build carries over")
	}
	dec, err := decoder()
	if err != nil {
		return fail(err)
	}
	rc := &carriedRecords{infos: rf.infos, fresh: map[string]recordFrom{}}
	if rc.prevFrom, err = readRecordFrom(snap.Dir, snap.Manifest, len(snap.Data.CVEs), dec); err != nil {
		return fail(err)
	}
	// The newest updated_at of NVD's CVEs, before those of records.
	for i := range cves {
		if rc.nvd == nil || cves[i].UpdatedAt > *rc.nvd {
			s := cves[i].UpdatedAt
			rc.nvd = &s
		}
	}
	// The previous snapshot's CVE of a name, for the records read: its
	// CVEs are in name order.
	olds := snap.Data.CVEs
	if !slices.IsSortedFunc(olds, func(a, b index.CVE) int { return strings.Compare(a.Name, b.Name) }) {
		return not("the previous snapshot's CVEs are not in name order")
	}
	at := func(name string) (int, bool) {
		return slices.BinarySearchFunc(olds, name, func(c index.CVE, name string) int { return strings.Compare(c.Name, name) })
	}
	if len(prevAt) != len(names) || len(names) < len(prev.lines) {
		return fail(fmt.Errorf("%d CVEs' places for %d CVEs", len(prevAt), len(names)))
	}

	// The record files read, and which CVE each record of them wins.
	replaced := map[int32]bool{}
	for _, a := range rf.at {
		replaced[int32(a)] = true
	}
	read := map[string]*CVE5Record{}
	if len(rf.changed) > 0 {
		recs, _, err := readCVE5Files(rf.changed, nil)
		if err != nil {
			return nil, nil, nil, nil, "", err
		}
		for _, r := range recs {
			q := int32(rf.at[r.Input])
			k, ok := at(r.ID)
			f := recordFrom{}
			if ok {
				f = rc.prevFrom[k]
			}
			switch {
			case f.In == 0, r.Modified.After(f.Modified()),
				r.Modified.Equal(f.Modified()) && (q > f.In || q == f.In && replaced[f.In]):
				read[r.ID] = r
				rc.fresh[r.ID] = newRecordFrom(q, r.Modified, slices.ContainsFunc(r.Affected, keyByPackageName))
			case replaced[f.In]:
				// An older record, or as old and read before:
				// what the unchanged files hold is not known.
			}
		}
		rc.read = len(recs)
	}
	var unresolved []string
	for k, f := range rc.prevFrom {
		if name := snap.Data.CVEs[k].Name; replaced[f.In] && read[name] == nil {
			unresolved = append(unresolved, name)
		}
	}
	if len(unresolved) > 0 {
		return not(fmt.Sprintf("the records of %s (%s) came from a record file replaced, and the files read hold none as recent: which record the unchanged files hold is not known",
			plural(len(unresolved), "CVE", "CVEs"), strings.Join(unresolved[:min(3, len(unresolved))], ", ")))
	}

	// The texts carried are taken by their ids in the previous
	// snapshot's table (see textscarry.go).
	texts, why, err := newPrevTexts(snap, snap.textHash)
	switch {
	case err != nil:
		return fail(err)
	case why != "":
		return not(why)
	}
	rc.texts = texts
	// The previous snapshot's CVEs of NVD (those of its NVD records,
	// the first of names), and those of names, by place in it; the
	// names new to it.
	inNVD, now := make([]bool, len(olds)), make([]bool, len(olds))
	newNames := map[string]bool{}
	for i, name := range names {
		k := prevAt[i]
		if k >= 0 && (k >= len(olds) || olds[k].Name != name) {
			return fail(fmt.Errorf("%s is not the previous snapshot's CVE %d", name, k+1))
		}
		if k >= 0 {
			now[k], inNVD[k] = true, inNVD[k] || i < len(prev.lines)
		} else {
			newNames[name] = true
		}
	}
	for i, name := range names {
		c := &cves[i]
		k, ok := prevAt[i], prevAt[i] >= 0
		if r := read[name]; r != nil {
			// A record read: taken as a full build takes it, the
			// CVE whole.
			if bodies[i] != nil {
				whole, err := snap.decodeCVE(k)
				if err != nil {
					return fail(err)
				}
				if !d.SetNVD(k, &whole) {
					return not(fmt.Sprintf("the previous snapshot's details of %s are not those of its CVE", name))
				}
				*c, bodies[i] = whole, nil
			}
			c.Affected, c.SSVC = r.Affected, r.SSVC
			c.EntryKeys = recordEntryKeys(c, aliases)
			rc.held++
			continue
		}
		if !ok {
			continue // new to the build: no record gave it anything
		}
		hasA, hasS, hasK := d.HeldKinds(k)
		if !hasA && !hasS && !hasK {
			continue
		}
		// The keys a CVE gets of its entries depend on NVD's CPEs, which
		// a CVE whose NVD record changed (its body not carried) may have
		// gained or lost.
		ownKeys, entries := false, 0
		var keys []byte
		if bodies[i] == nil {
			switch {
			case len(c.CPEs) > 0:
				ownKeys = true // none
			case !hasK && hasA:
				old, err := snap.decodeCVE(k)
				if err != nil {
					return fail(err)
				}
				if len(old.CPEs) == 0 {
					break // no key before, none now
				}
				if rc.prevFrom[k].ByPackage() {
					return not(fmt.Sprintf("NVD's record of %s lost its CPEs, and its record's affected entries name products by packageName, which the previous snapshot does not keep", name))
				}
				es, err := d.Affected(k)
				if err != nil {
					return fail(err)
				}
				ownKeys, keys, entries = true, index.EntryKeysText(entryKeysOf(es, aliases)), len(es)
			}
		}
		c.Held = index.HeldFrom(d, k, ownKeys, keys, entries)
		rc.held++
	}
	// The CVEs served from a record alone that NVD still lacks: carried
	// whole, or from a record read.
	for k := range olds {
		name := olds[k].Name
		if inNVD[k] || now[k] {
			continue
		}
		now[k] = true
		if r := read[name]; r != nil {
			c := r.CVE()
			c.EntryKeys = recordEntryKeys(&c, aliases)
			names, cves, bodies = append(names, name), append(cves, c), append(bodies, nil)
			rc.held++
			rc.only++
			continue
		}
		c, ok := carriedCVE(snap, k, name)
		if !ok {
			return not(fmt.Sprintf("the previous snapshot's details of %s are not those of its CVE", name))
		}
		c.Held = index.HeldFrom(d, k, false, nil, 0)
		names, cves, bodies = append(names, name), append(cves, c), append(bodies, snap.bodies[k])
		rc.held++
		rc.only++
	}
	// CVEs new to the build, from a record read alone.
	for name, r := range read {
		if k, ok := at(name); ok && now[k] || newNames[name] {
			continue
		}
		c := r.CVE()
		c.EntryKeys = recordEntryKeys(&c, aliases)
		names, cves, bodies = append(names, name), append(cves, c), append(bodies, nil)
		rc.held++
		rc.only++
	}
	return rc, names, cves, bodies, "", nil
}

// recordEntryKeys are the entry keys of a CVE with its record's entries
// (see setEntryKeys).
func recordEntryKeys(c *index.CVE, aliases *Aliases) []index.EntryKey {
	if len(c.Affected) == 0 || len(c.CPEs) > 0 {
		return nil
	}
	return entryKeysOf(c.Affected, aliases)
}

// keyByPackageName reports whether an entry's product key may come from
// its packageName (see EntryKeys): it has one, no CPE of it gives a key,
// and its product says nothing. The details do not keep packageNames:
// the keys of entries none of which has such a packageName are those of
// the entries as the details keep them.
func keyByPackageName(e index.AffectedEntry) bool {
	if e.PackageName == nil {
		return false
	}
	for _, c := range e.CPEs {
		if _, ok := cpeKey(c); ok {
			return false
		}
	}
	return noKeyName(deref(e.Product))
}

// fromOf is where the record of each CVE of cves (by name) came from:
// where the previous snapshot's came from (prev's CVEs, by name).
func (rc *carriedRecords) fromOf(cves []index.CVE, prev *Snapshot) ([]recordFrom, error) {
	olds := prev.Data.CVEs
	if len(rc.prevFrom) != len(olds) {
		return nil, fmt.Errorf("%s: %d lines for %d CVEs", fileCVE5From, len(rc.prevFrom), len(olds))
	}
	out := make([]recordFrom, len(cves))
	k := 0
	for i := range cves {
		for k < len(olds) && olds[k].Name < cves[i].Name {
			k++
		}
		if f, ok := rc.fresh[cves[i].Name]; ok {
			out[i] = f
		} else if k < len(olds) && olds[k].Name == cves[i].Name {
			out[i] = rc.prevFrom[k]
		}
	}
	return out, nil
}
