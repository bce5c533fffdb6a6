package loader

import (
	"fmt"
	"sort"
	"time"

	"github.com/vulnd/vulnd/index"
)

// BuildOptions says what a snapshot is built from and where it goes.
type BuildOptions struct {
	// CWECatalog is MITRE's catalog (cwec_v*.xml or the .zip MITRE ships).
	CWECatalog string
	// Feeds are NVD CVE API 2.0 feed files (.json, .json.gz or a .zip
	// holding one JSON), in the order given: when two hold the same CVE,
	// the later lastModified wins, and on a tie the file named later.
	Feeds []string
	// Out is the snapshot directory to write, atomically.
	Out string
	// Time is the build time (the new report's created_at).
	Time time.Time
}

// Build reads the inputs, maps them and writes the snapshot. The error
// names the file and record at fault.
func Build(opt BuildOptions) (Manifest, error) {
	if len(opt.Feeds) == 0 {
		return Manifest{}, fmt.Errorf("loader: no NVD feed files given")
	}
	cwes, err := ReadCWECatalog(opt.CWECatalog)
	if err != nil {
		return Manifest{}, err
	}
	cves, err := ReadFeeds(opt.Feeds)
	if err != nil {
		return Manifest{}, err
	}
	assignCPEIDs(cves)
	inputs := make([]FileInfo, 0, len(opt.Feeds)+1)
	for _, p := range append([]string{opt.CWECatalog}, opt.Feeds...) {
		fi, err := hashFile(p)
		if err != nil {
			return Manifest{}, err
		}
		inputs = append(inputs, fi)
	}
	d := &index.Data{CWEs: cwes, CVEs: cves}
	return Write(opt.Out, d, opt.Time, inputs)
}

// ReadFeeds decodes NVD feed files one record at a time and merges them:
// when two records share an id, the later lastModified wins, and on a tie
// the one read later (a later file, or later in the same file). The result
// is in no particular order and has no cpe_id assigned.
func ReadFeeds(paths []string) ([]index.CVE, error) {
	byID := map[string]*feedRecord{}
	for _, p := range paths {
		if err := readFeed(p, func(fr *feedRecord) error {
			if old, ok := byID[fr.cve.Name]; ok && old.modified.After(fr.modified) {
				return nil
			}
			byID[fr.cve.Name] = fr
			return nil
		}); err != nil {
			return nil, err
		}
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]index.CVE, len(ids))
	for i, id := range ids {
		out[i] = byID[id].cve
	}
	return out, nil
}

func readFeed(path string, emit func(*feedRecord) error) error {
	rc, err := openInput(path)
	if err != nil {
		return err
	}
	defer rc.Close()
	return decodeFeed(rc, path, emit)
}

// assignCPEIDs gives every distinct CPE URI one id, the same wherever the
// URI occurs: 1, 2, ... in URI byte order.
func assignCPEIDs(cves []index.CVE) {
	ids := map[string]int64{}
	for i := range cves {
		for _, c := range cves[i].CPEs {
			ids[c.URI] = 0
		}
	}
	uris := make([]string, 0, len(ids))
	for u := range ids {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	for i, u := range uris {
		ids[u] = int64(i + 1)
	}
	for i := range cves {
		for k := range cves[i].CPEs {
			cves[i].CPEs[k].ID = ids[cves[i].CPEs[k].URI]
		}
	}
}
