package oci

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"

	"github.com/vulnd/vulnd/loader"
)

// FuzzFetch: whatever manifest a registry serves, Fetch does not panic,
// and what it accepts is either chunked (manifest.json first, then
// distinct chunks with sha256 digests and sizes within the limit: which
// file each goes to is manifest.json's to say, checked as Download reads
// it) or names only a snapshot's files, each once, with sha256 digests,
// so Download writes nothing else.
func FuzzFetch(f *testing.F) {
	store := memory.New()
	p, err := Publish(context.Background(), store, demo, []string{"latest"})
	if err != nil {
		f.Fatal(err)
	}
	good, err := content.FetchAll(context.Background(), store, p.Manifest)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.vulnd.snapshot.v1","layers":[{"mediaType":"application/vnd.vulnd.snapshot.data.v1+zstd","digest":"sha256:00","size":-1,"annotations":{"org.opencontainers.image.title":"../x"}}]}`))
	f.Add([]byte(`{}`))
	// The files of a snapshot of some format version served.
	var wants [][]string
	for v := 1; v <= loader.FormatVersion; v++ {
		if names := loader.DataFileNamesOf(v); names != nil {
			wants = append(wants, append([]string{loader.ManifestName}, names...))
			// With the optional files (the EPSS scores) too.
			wants = append(wants, append(append([]string{loader.ManifestName}, names...), loader.OptionalDataFileNames()...))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		desc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, raw)
		s := memory.New()
		if err := s.Push(context.Background(), desc, bytes.NewReader(raw)); err != nil {
			return
		}
		a, err := Fetch(context.Background(), s, desc)
		if err != nil {
			if len(raw) > 0 && !errors.Is(err, ErrNotSnapshot) {
				t.Fatalf("a bad manifest's error does not wrap ErrNotSnapshot: %v", err)
			}
			return
		}
		if a.chunked {
			if a.layers[0].Annotations[ocispec.AnnotationTitle] != loader.ManifestName || a.layers[0].MediaType != MediaTypeManifest {
				t.Fatalf("accepted a chunked artifact whose first layer is %+v", a.layers[0])
			}
			seen := map[string]bool{}
			for _, l := range a.layers[1:] {
				if l.MediaType != MediaTypeChunk || l.Digest.Algorithm() != "sha256" || l.Size < 0 || l.Size > maxChunkBytes || seen[l.Digest.String()] {
					t.Fatalf("accepted chunk layer %+v", l)
				}
				seen[l.Digest.String()] = true
			}
			return
		}
		var names []string
		for _, l := range a.layers {
			name := l.Annotations[ocispec.AnnotationTitle]
			if !slices.ContainsFunc(wants, func(w []string) bool { return slices.Contains(w, name) }) || strings.ContainsAny(name, `/\`) || l.Digest.Algorithm() != "sha256" || l.Size < 0 {
				t.Fatalf("accepted layer %q (%s, %d)", name, l.Digest, l.Size)
			}
			names = append(names, name)
		}
		slices.Sort(names)
		if !slices.ContainsFunc(wants, func(w []string) bool { return slices.Equal(slices.Sorted(slices.Values(w)), slices.Compact(names)) }) {
			t.Fatalf("accepted layers %v", names)
		}
	})
}

// FuzzParseRef: ParseRef never panics, and what it accepts prints back
// as an oci:// reference that parses to the same.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"oci://127.0.0.1:5000/vulnd/snapshots:latest", "oci://ghcr.io/a/b@sha256:" + strings.Repeat("0", 64), "oci://x", "latest"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		r2, err := ParseRef(r.String())
		if err != nil || r2 != r {
			t.Fatalf("ParseRef(%q) = %v, which parses back as %v, %v", s, r, r2, err)
		}
	})
}
