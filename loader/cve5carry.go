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
//     and details line as they were (the texts carried as a HeldText);
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

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/vulnd/vulnd/index"
)

// carriedRecords is what a build takes of the CVE JSON 5 records from
// the previous snapshot (see carryRecords).
type carriedRecords struct {
	// infos are the record files' FileInfos, in the order given; cve5
	// the manifest's newest.cve5.
	infos []FileInfo
	cve5  *string
	// prevFrom is, by CVE of the previous snapshot, where its record
	// came from (its cve5from.txt.zst).
	prevFrom []recordFrom
	// nvd is the newest updated_at of NVD's CVEs (nil: none), the
	// manifest's newest.nvd (see inputDates).
	nvd *string
	// held CVEs took texts of a record, only of them from a record alone.
	held, only int
}

// aliasesSum is the SHA-256 of an alias file's bytes, hex, which a
// manifest gives (Manifest.Aliases).
func aliasesSum(text []byte) string {
	h := sha256.Sum256(text)
	return hex.EncodeToString(h[:])
}

// sameRecordInputs checks that the record files among paths (the build's
// CVE inputs; pos are the feeds' places among the manifest's inputs) are
// those of m, byte for byte, at the same places, and that the alias file
// (aliasSum) is m's: their FileInfos, in the order given, or why not.
func sameRecordInputs(paths []string, pos []int, m Manifest, aliasSum string) ([]FileInfo, string) {
	var infos []FileInfo
	n := 0
	for k, p := range paths {
		at := 1 + k
		if n < len(pos) && pos[n] == at {
			n++
			continue
		}
		was := m.Inputs[at]
		if was.Name != filepath.Base(p) {
			return nil, fmt.Sprintf("input %d is the CVE JSON 5 record file %s, the previous snapshot's was %s", k+1, filepath.Base(p), was.Name)
		}
		fi, ok, err := hashFile(p)
		if err != nil || !ok {
			return nil, fmt.Sprintf("%s is not a regular file", p)
		}
		if fi.Size != was.Size || fi.SHA256 != was.SHA256 {
			return nil, fmt.Sprintf("the CVE JSON 5 record file %s changed", fi.Name)
		}
		infos = append(infos, was)
	}
	switch m.Aliases {
	case "":
		return nil, "the previous snapshot does not say which alias file it was built with"
	case aliasSum:
	default:
		return nil, "the alias file is not the one the previous snapshot was built with"
	}
	return infos, ""
}

// carryRecords gives the CVEs of NVD's records (cves, named names, the
// bodies carried over in bodies) what the records gave them in the
// previous snapshot snap (its NVD records prev), and adds the CVEs it
// served from a record alone that NVD still lacks, with their bodies as
// stored: the CVEs' names, the CVEs and their bodies, extended. The
// texts are held (index.HeldDetails). why says why the records are to
// be read again ("": they need not).
func carryRecords(snap *Snapshot, prev *previousNVD, names []string, cves []index.CVE, bodies [][]byte, aliases *Aliases) (*carriedRecords, []string, []index.CVE, [][]byte, string, error) {
	fail := func(err error) (*carriedRecords, []string, []index.CVE, [][]byte, string, error) {
		return nil, nil, nil, nil, "", fmt.Errorf("loader: -previous %s: %w", snap.Dir, err)
	}
	d := snap.details
	if d == nil || snap.bodies == nil || d.Len() != len(snap.Data.CVEs) {
		return nil, nil, nil, nil, "the previous snapshot's details or bodies are not those a build carries over", nil
	}
	dec, err := decoder()
	if err != nil {
		return fail(err)
	}
	rc := &carriedRecords{}
	if rc.prevFrom, err = readRecordFrom(snap.Dir, snap.Manifest, len(snap.Data.CVEs), dec); err != nil {
		return fail(err)
	}
	held, err := index.NewHeldStore()
	if err != nil {
		return fail(err)
	}
	defer held.Seal()
	// The newest updated_at of NVD's CVEs, before those of records.
	for i := range cves {
		if rc.nvd == nil || cves[i].UpdatedAt > *rc.nvd {
			s := cves[i].UpdatedAt
			rc.nvd = &s
		}
	}
	at := make(map[string]int, len(snap.Data.CVEs))
	for k := range snap.Data.CVEs {
		at[snap.Data.CVEs[k].Name] = k
	}
	inNVD := make(map[string]bool, len(prev.lines)) // the previous snapshot's CVEs of NVD
	for j := range prev.lines {
		inNVD[prev.lines[j].ID] = true
	}
	now := make(map[string]bool, len(names))
	for i, name := range names {
		now[name] = true
		k, ok := at[name]
		if !ok {
			continue // new to the build: no record gave it anything
		}
		a, s, keys, n, err := d.HeldParts(k)
		if err != nil {
			return fail(err)
		}
		if len(a)+len(s)+len(keys) == 0 {
			continue
		}
		c := &cves[i]
		// The keys a CVE gets of its entries depend on NVD's CPEs, which
		// a CVE whose NVD record changed (its body not carried) may have
		// gained or lost.
		if bodies[i] == nil {
			switch {
			case len(c.CPEs) > 0:
				keys = nil
			case len(keys) == 0 && len(a) > 0:
				old, err := snap.decodeCVE(k)
				if err != nil {
					return fail(err)
				}
				if len(old.CPEs) == 0 {
					break // no key before, none now
				}
				es, err := d.Affected(k)
				if err != nil {
					return fail(err)
				}
				if slices.ContainsFunc(es, packageNameMatters) {
					return nil, nil, nil, nil, fmt.Sprintf("NVD's record of %s lost its CPEs: the vendors and products of its affected entries are read from its record again", name), nil
				}
				keys = index.EntryKeysText(entryKeysOf(es, aliases))
			}
		}
		c.Held = held.Hold(index.HeldTextFrom(a, s, keys, n))
		rc.held++
	}
	// The CVEs served from a record alone that NVD still lacks: carried
	// whole.
	for k := range snap.Data.CVEs {
		name := snap.Data.CVEs[k].Name
		if inNVD[name] || now[name] {
			continue
		}
		c, ok := carriedCVE(snap, k, name)
		if !ok {
			return nil, nil, nil, nil, fmt.Sprintf("the previous snapshot's details of %s are not those of its CVE", name), nil
		}
		a, s, keys, n, err := d.HeldParts(k)
		if err != nil {
			return fail(err)
		}
		c.Held = held.Hold(index.HeldTextFrom(a, s, keys, n))
		names, cves, bodies = append(names, name), append(cves, c), append(bodies, snap.bodies[k])
		rc.held++
		rc.only++
	}
	return rc, names, cves, bodies, "", nil
}

// packageNameMatters reports whether an entry's product key could come
// from its packageName (see EntryKeys): no CPE of it gives a key, and its
// product says nothing.
func packageNameMatters(e index.AffectedEntry) bool {
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
		if k < len(olds) && olds[k].Name == cves[i].Name {
			out[i] = rc.prevFrom[k]
		}
	}
	return out, nil
}
