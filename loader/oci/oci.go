// Package oci moves vulnd snapshots through an OCI registry, with oras-go:
// Publish pushes a snapshot directory, checked by its sums, as one
// artifact and tags it; Fetch reads an artifact's manifest and checks
// that it is a vulnd snapshot; Download writes its files into an empty
// directory, each blob checked against its digest and size, taking the
// blobs a snapshot already on the disk holds from there instead of the
// registry. What a pulled directory is worth is then loader.Load's to say:
// the snapshot's own checksums and consistency checks run before anything
// serves it.
//
// An artifact is an OCI image manifest (image-spec 1.1) with an empty
// config, annotated with the build time (org.opencontainers.image.created),
// the snapshot id, the format version and the counts. Its layers are the
// snapshot's manifest.json (MediaTypeManifest, first), then each chunk of
// its data files (MediaTypeChunk: a zstd frame whose SHA-256 the manifest
// lists), in the order of the files by name and of their chunks, each
// distinct chunk once. A new snapshot whose data shares chunks with the
// last one shares those blobs: a registry already holding them is not sent
// them again, and a replica already holding them does not download them.
// The same snapshot always makes the same artifact, so its digest changes
// exactly when the snapshot does.
//
// Artifacts that vulnd published before chunks were blobs
// (ArtifactTypeFiles: a layer per file, MediaTypeData, named by its
// org.opencontainers.image.title) are still read.
package oci

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// The artifact's media types and annotation keys.
const (
	// ArtifactType is what Publish pushes: a blob per chunk.
	ArtifactType = "application/vnd.vulnd.snapshot.v2"
	// ArtifactTypeFiles is the layout of a layer per file, which Fetch
	// and Download still read.
	ArtifactTypeFiles = "application/vnd.vulnd.snapshot.v1"
	MediaTypeManifest = "application/vnd.vulnd.snapshot.manifest.v1+json"
	// MediaTypeChunk is a chunk of a data file: one zstd frame.
	MediaTypeChunk = "application/vnd.vulnd.snapshot.chunk.v1+zstd"
	// MediaTypeData is a whole data file (ArtifactTypeFiles).
	MediaTypeData = "application/vnd.vulnd.snapshot.data.v1+zstd"

	AnnotationID      = "dev.vulnd.snapshot.id"
	AnnotationFormat  = "dev.vulnd.snapshot.format-version"
	AnnotationBuiltAt = "dev.vulnd.snapshot.built-at"
	// AnnotationCount + a kind (cves, cwes, vendors, products, reports,
	// alerts) is that count.
	AnnotationCount = "dev.vulnd.snapshot.count."
)

// Scheme starts every reference vulnd takes: oci://REGISTRY/REPO:TAG.
const Scheme = "oci://"

// Ref is a parsed oci://REGISTRY/REPOSITORY[:TAG|@DIGEST].
type Ref struct {
	ref registry.Reference
}

// ParseRef parses s, which must be oci://REGISTRY/REPOSITORY:TAG or
// oci://REGISTRY/REPOSITORY@sha256:HEX. A reference without a tag or
// digest is refused rather than taken as :latest, so that what a command
// line names is what it gets.
func ParseRef(s string) (Ref, error) {
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return Ref{}, fmt.Errorf("%q is not an oci://REGISTRY/REPOSITORY:TAG reference", s)
	}
	r, err := registry.ParseReference(rest)
	if err != nil {
		return Ref{}, fmt.Errorf("%q: %w", s, err)
	}
	if r.Reference == "" {
		return Ref{}, fmt.Errorf("%q names no tag or digest (oci://REGISTRY/REPOSITORY:TAG)", s)
	}
	return Ref{r}, nil
}

// String is the reference in oci:// form.
func (r Ref) String() string { return Scheme + r.ref.String() }

// Registry is the registry's host[:port].
func (r Ref) Registry() string { return r.ref.Registry }

// Reference is the tag or the digest.
func (r Ref) Reference() string { return r.ref.Reference }

// IsDigest tells whether the reference is a digest, not a tag.
func (r Ref) IsDigest() bool {
	_, err := r.ref.Digest()
	return err == nil
}

// Options say how to reach a registry.
type Options struct {
	// PlainHTTP talks HTTP instead of HTTPS: for a registry on
	// localhost or a private network only.
	PlainHTTP bool
	// Client is the HTTP client; nil uses oras-go's retrying client
	// (retries with backoff on network errors, 429 and 5xx).
	Client *http.Client
	// UserAgent names vulnd to the registry.
	UserAgent string
}

// The environment variables that give credentials for every registry,
// before the Docker configuration is read.
const (
	EnvUsername = "VULND_REGISTRY_USERNAME"
	EnvPassword = "VULND_REGISTRY_PASSWORD"
)

// Repository opens r's repository for pushing and pulling. Credentials
// come from VULND_REGISTRY_USERNAME and VULND_REGISTRY_PASSWORD when set,
// else from the Docker configuration (DOCKER_CONFIG or
// ~/.docker/config.json, with its credential helpers) as docker login
// left it; none is fine for a registry that asks for none.
func Repository(r Ref, opt Options) (*remote.Repository, error) {
	repo, err := remote.NewRepository(r.ref.Registry + "/" + r.ref.Repository)
	if err != nil {
		return nil, err
	}
	repo.PlainHTTP = opt.PlainHTTP
	cred, err := credential(r.ref.Registry)
	if err != nil {
		return nil, err
	}
	client := opt.Client
	if client == nil {
		client = retry.DefaultClient
	}
	ua := opt.UserAgent
	if ua == "" {
		ua = "vulnd"
	}
	repo.Client = &auth.Client{
		Client:     client,
		Header:     http.Header{"User-Agent": {ua}},
		Cache:      auth.NewCache(),
		Credential: cred,
	}
	return repo, nil
}

func credential(reg string) (auth.CredentialFunc, error) {
	user, pass := os.Getenv(EnvUsername), os.Getenv(EnvPassword)
	if user != "" || pass != "" {
		if user == "" || pass == "" {
			return nil, errors.New(EnvUsername + " and " + EnvPassword + " must be set together")
		}
		return auth.StaticCredential(reg, auth.Credential{Username: user, Password: pass}), nil
	}
	store, err := credentials.NewStoreFromDocker(credentials.StoreOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the Docker configuration for credentials: %w", err)
	}
	return credentials.Credential(store), nil
}
