package prooftypes

import (
	"bufio"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/blake2b"
)

// Published is one parameters.json entry: the IPFS CID and the digest (first 32 hex characters
// of Blake2b-512 over the whole file) of a published parameter, verifying-key or SRS file, and
// the sector size it serves (0 for the SnarkPack SRS, which serves every size).
type Published struct {
	CID        string `json:"cid"`
	Digest     string `json:"digest"`
	SectorSize uint64 `json:"sector_size"`
}

// The published parameters.json and srs-inner-product.json of rust-fil-proofs, as released:
// every v28 PoRep, PoSt and SnapDeals (both variants) circuit file and the inner-product SRS.
var (
	//go:embed parameters.json
	parametersJSON []byte
	//go:embed srs-inner-product.json
	srsJSON []byte
)

// PublishedFiles lists the files of the official parameters.json and srs-inner-product.json,
// keyed by file name, so that `params check` and `params fetch` need no JSON file.
var PublishedFiles = mustParsePublished(parametersJSON, srsJSON)

// ParametersJSON returns the embedded parameters.json (for tools that expect the file).
func ParametersJSON() []byte { return append([]byte(nil), parametersJSON...) }

// ParsePublished reads parameters.json-format documents (file name → cid, digest,
// sector_size) into one table; a name listed twice with different content is an error.
func ParsePublished(docs ...[]byte) (map[string]Published, error) {
	out := map[string]Published{}
	for _, doc := range docs {
		var m map[string]Published
		if err := json.Unmarshal(doc, &m); err != nil {
			return nil, fmt.Errorf("parameters.json: %w", err)
		}
		for name, p := range m {
			if name == "" || filepath.Base(name) != name || strings.HasPrefix(name, ".") {
				return nil, fmt.Errorf("parameters.json: %q is not a plain file name", name)
			}
			if p.CID == "" || len(p.Digest) != 32 {
				return nil, fmt.Errorf("parameters.json: %s needs a cid and a 32-character digest", name)
			}
			if _, err := hex.DecodeString(p.Digest); err != nil {
				return nil, fmt.Errorf("parameters.json: %s: digest %q is not hex", name, p.Digest)
			}
			if old, ok := out[name]; ok && old != p {
				return nil, fmt.Errorf("parameters.json: %s listed twice with different content", name)
			}
			out[name] = p
		}
	}
	return out, nil
}

func mustParsePublished(docs ...[]byte) map[string]Published {
	m, err := ParsePublished(docs...)
	if err != nil {
		panic(err)
	}
	return m
}

// FileDigest is the parameters.json digest of a file's content: the first 32 hex characters of
// its Blake2b-512 hash.
func FileDigest(r io.Reader) (string, error) {
	h, err := blake2b.New512(nil)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// DigestMismatchError reports a parameter file whose content is not the published one.
type DigestMismatchError struct {
	File      string
	Got, Want string
}

func (e *DigestMismatchError) Error() string {
	return fmt.Sprintf("%s: digest %s, published %s", e.File, e.Got, e.Want)
}

// CheckPublishedFiles verifies the .params and .vk files of p in dir against the published
// digests (reading every byte: about 44 GiB for the 32 GiB and 64 GiB circuits).
func CheckPublishedFiles(dir string, p *SealProof) error {
	for _, name := range []string{p.VKFile(), p.ParamsFile()} {
		want, ok := PublishedFiles[name]
		if !ok {
			return fmt.Errorf("%s: not a published parameter file", name)
		}
		if err := CheckFile(dir, name, want.Digest); err != nil {
			return err
		}
	}
	return nil
}

// CheckFile verifies dir/name against digest; a different content is a *DigestMismatchError.
func CheckFile(dir, name, digest string) error {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	defer f.Close()
	got, err := FileDigest(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	if got != digest {
		return &DigestMismatchError{File: name, Got: got, Want: digest}
	}
	return nil
}
