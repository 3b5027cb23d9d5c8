package prooftypes

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/crypto/blake2b"
)

// Published is one parameters.json entry: the IPFS CID and the digest (first 32 hex characters
// of Blake2b-512 over the whole file) of a published parameter or verifying-key file.
type Published struct {
	CID    string
	Digest string
}

// PublishedFiles lists the v28 parameter files of the official parameters.json (PoRep,
// Winning/WindowPoSt and SnapDeals), keyed by file name, so that `params check` can verify a
// parameter directory without the JSON file.
var PublishedFiles = map[string]Published{
	"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f.params": {"QmWceMgnWYLopMuM4AoGMvGEau7tNe5UK83XFjH5V9B17h", "434fb1338ecfaf0f59256f30dde4968f"},
	"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f.vk":     {"QmamahpFCstMUqHi2qGtVoDnRrsXhid86qsfvoyCTKJqHr", "dc1ade9929ade1708238f155343044ac"},
	"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-ecd683648512ab1765faa2a5f14bab48f676e633467f0aa8aad4b55dcb0652bb.params": {"QmPXAPPuQtuQz7Zz3MHMAMEtsYwqM1o9H1csPLeiMUQwZH", "09e612e4eeb7a0eb95679a88404f960c"},
	"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-ecd683648512ab1765faa2a5f14bab48f676e633467f0aa8aad4b55dcb0652bb.vk":     {"QmYCuipFyvVW1GojdMrjK1JnMobXtT4zRCZs1CGxjizs99", "b687beb9adbd9dabe265a7e3620813e4"},
	"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-6babf46ce344ae495d558e7770a585b2382d54f225af8ed0397b8be7c3fcd472.params": {"QmYBpTt7LWNAWr1JXThV5VxX7wsQFLd1PHrGYVbrU1EZjC", "6c77597eb91ab936c1cef4cf19eba1b3"},
	"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-6babf46ce344ae495d558e7770a585b2382d54f225af8ed0397b8be7c3fcd472.vk":     {"QmWionkqH2B6TXivzBSQeSyBxojaiAFbzhjtwYRrfwd8nH", "065179da19fbe515507267677f02823e"},
	"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.params": {"QmengpM684XLQfG8754ToonszgEg2bQeAGUan5uXTHUQzJ", "6a388072a518cf46ebd661f5cc46900a"},
	"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820.vk":     {"Qmf93EMrADXAK6CyiSfE8xx45fkMfR3uzKEPCvZC1n2kzb", "0c7b4aac1c40fdb7eb82bc355b41addf"},
	"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-2-sha256_hasher-96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2.params": {"QmS7ye6Ri2MfFzCkcUJ7FQ6zxDKuJ6J6B8k5PN7wzSR9sX", "1801f8a6e1b00bceb00cc27314bb5ce3"},
	"v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-2-sha256_hasher-96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2.vk":     {"QmehSmC6BhrgRZakPDta2ewoH9nosNzdjCqQRXsNFNUkLN", "a89884252c04c298d0b3c81bfd884164"},
	"v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-61fa69f38b9cc771ba27b670124714b4ea77fbeae05e377fb859c4a43b73a30c.params":                        {"Qma5WL6abSqYg9uUQAZ3EHS286bsNsha7oAGsJBD48Bq2q", "c3ad7bb549470b82ad52ed070aebb4f4"},
	"v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-61fa69f38b9cc771ba27b670124714b4ea77fbeae05e377fb859c4a43b73a30c.vk":                            {"QmUa7f9JtJMsqJJ3s3ZXk6WyF4xJLE8FiqYskZGgk8GCDv", "994c5b7d450ca9da348c910689f2dc7f"},
	"v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-92180959e1918d26350b8e6cfe217bbdd0a2d8de51ebec269078b364b715ad63.params":                        {"QmQiT4qBGodrVNEgVTDXxBNDdPbaD8Ag7Sx3ZTq1zHX79S", "5aedd2cf3e5c0a15623d56a1b43110ad"},
	"v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-92180959e1918d26350b8e6cfe217bbdd0a2d8de51ebec269078b364b715ad63.vk":                            {"QmdcpKUQvHM8RFRVKbk1yHfEqMcBzhtFWKRp9SNEmWq37i", "abd80269054d391a734febdac0d2e687"},
	"v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-fb9e095bebdd77511c0269b967b4d87ba8b8a525edaa0e165de23ba454510194.params":                        {"QmYM6Hg7mjmvA3ZHTsqkss1fkdyDju5dDmLiBZGJ5pz9y9", "311f92a3e75036ced01b1c0025f1fa0c"},
	"v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-fb9e095bebdd77511c0269b967b4d87ba8b8a525edaa0e165de23ba454510194.vk":                            {"QmaQsTLL3nc5dw6wAvaioJSBfd1jhQrA2o6ucFf7XeV74P", "eadad9784969890d30f2749708c79771"},
	"v28-empty-sector-update-merkletree-poseidon_hasher-8-8-0-3b7f44a9362e3985369454947bc94022e118211e49fd672d52bec1cbfd599d18.params":                        {"QmNPc75iEfcahCwNKdqnWLtxnjspUGGR4iscjiz3wP3RtS", "1b3cfd761a961543f9eb273e435a06a2"},
	"v28-empty-sector-update-merkletree-poseidon_hasher-8-8-0-3b7f44a9362e3985369454947bc94022e118211e49fd672d52bec1cbfd599d18.vk":                            {"QmdFFUe1gcz9MMHc6YW8aoV48w4ckvcERjt7PkydQAMfCN", "3a6941983754737fde880d29c7094905"},
	"v28-empty-sector-update-merkletree-poseidon_hasher-8-8-2-102e1444a7e9a97ebf1e3d6855dcc77e66c011ea66f936d9b2c508f87f2f83a7.params":                        {"QmUB6xTVjzBQGuDNeyJMrrJ1byk58vhPm8eY2Lv9pgwanp", "1a392e7b759fb18e036c7559b5ece816"},
	"v28-empty-sector-update-merkletree-poseidon_hasher-8-8-2-102e1444a7e9a97ebf1e3d6855dcc77e66c011ea66f936d9b2c508f87f2f83a7.vk":                            {"Qmd794Jty7k26XJ8Eg4NDEks65Qk8G4GVfGkwqvymv8HAg", "80e366df2f1011953c2d01c7b7c9ee8e"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-0170db1f394b35d995252228ee359194b13199d259380541dc529fb0099096b0.params":                {"QmVxjFRyhmyQaZEtCh7nk2abc7LhFkzhnRX4rcHqCCpikR", "7610b9f82bfc88405b7a832b651ce2f6"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-0170db1f394b35d995252228ee359194b13199d259380541dc529fb0099096b0.vk":                    {"QmcS5JZs8X3TdtkEBpHAdUYjdNDqcL7fWQFtQz69mpnu2X", "0e0958009936b9d5e515ec97b8cb792d"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-0cfb4f178bbb71cf2ecfcd42accce558b27199ab4fb59cb78f2483fe21ef36d9.params":                {"QmUiRx71uxfmUE8V3H9sWAsAXoM88KR4eo1ByvvcFNeTLR", "1a7d4a9c8a502a497ed92a54366af33f"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-0cfb4f178bbb71cf2ecfcd42accce558b27199ab4fb59cb78f2483fe21ef36d9.vk":                    {"QmfCeddjFpWtavzfEzZpJfzSajGNwfL4RjFXWAvA9TSnTV", "4dae975de4f011f101f5a2f86d1daaba"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-3ea05428c9d11689f23529cde32fd30aabd50f7d2c93657c1d3650bca3e8ea9e.params":                {"QmcSTqDcFVLGGVYz1njhUZ7B6fkKtBumsLUwx4nkh22TzS", "82c88066be968bb550a05e30ff6c2413"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-3ea05428c9d11689f23529cde32fd30aabd50f7d2c93657c1d3650bca3e8ea9e.vk":                    {"QmSTCXF2ipGA3f6muVo6kHc2URSx6PzZxGUqu7uykaH5KU", "ffd79788d614d27919ae5bd2d94eacb6"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-50c7368dea9593ed0989e70974d28024efa9d156d585b7eea1be22b2e753f331.params":                {"QmU9SBzJNrcjRFDiFc4GcApqdApN6z9X7MpUr66mJ2kAJP", "700171ecf7334e3199437c930676af82"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-50c7368dea9593ed0989e70974d28024efa9d156d585b7eea1be22b2e753f331.vk":                    {"QmbmUMa3TbbW3X5kFhExs6WgC4KeWT18YivaVmXDkB6ANG", "79ebb55f56fda427743e35053edad8fc"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-5294475db5237a2e83c3e52fd6c2b03859a1831d45ed08c4f35dbf9a803165a9.params":                {"QmdNEL2RtqL52GQNuj8uz6mVj5Z34NVnbaJ1yMyh1oXtBx", "c49499bb76a0762884896f9683403f55"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-5294475db5237a2e83c3e52fd6c2b03859a1831d45ed08c4f35dbf9a803165a9.vk":                    {"QmUiVYCQUgr6Y13pZFr8acWpSM4xvTXUdcvGmxyuHbKhsc", "34d4feeacd9abf788d69ef1bb4d8fd00"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-7d739b8cf60f1b0709eeebee7730e297683552e4b69cab6984ec0285663c5781.params":                {"QmVgCsJFRXKLuuUhT3aMYwKVGNA9rDeR6DCrs7cAe8riBT", "827359440349fe8f5a016e7598993b79"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-7d739b8cf60f1b0709eeebee7730e297683552e4b69cab6984ec0285663c5781.vk":                    {"QmfA31fbCWojSmhSGvvfxmxaYCpMoXP95zEQ9sLvBGHNaN", "bd2cd62f65c1ab84f19ca27e97b7c731"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-0377ded656c6f524f1618760bffe4e0a1c51d5a70c4509eedae8a27555733edc.params":                {"QmaUmfcJt6pozn8ndq1JVBzLRjRJdHMTPd4foa8iw5sjBZ", "2cf49eb26f1fee94c85781a390ddb4c8"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-0377ded656c6f524f1618760bffe4e0a1c51d5a70c4509eedae8a27555733edc.vk":                    {"QmR9i9KL3vhhAqTBGj1bPPC7LvkptxrH9RvxJxLN1vvsBE", "0f8ec542485568fa3468c066e9fed82b"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-559e581f022bb4e4ec6e719e563bf0e026ad6de42e56c18714a2c692b1b88d7e.params":                {"Qmdtczp7p4wrbDofmHdGhiixn9irAcN77mV9AEHZBaTt1i", "d84f79a16fe40e9e25a36e2107bb1ba0"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-559e581f022bb4e4ec6e719e563bf0e026ad6de42e56c18714a2c692b1b88d7e.vk":                    {"QmZCvxKcKP97vDAk8Nxs9R1fWtqpjQrAhhfXPoCi1nkDoF", "fc02943678dd119e69e7fab8420e8819"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-2-2627e4006b67f99cef990c0a47d5426cb7ab0a0ad58fc1061547bf2d28b09def.params":                {"QmeAN4vuANhXsF8xP2Lx5j2L6yMSdogLzpcvqCJThRGK1V", "3810b7780ac0e299b22ae70f1f94c9bc"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-2-2627e4006b67f99cef990c0a47d5426cb7ab0a0ad58fc1061547bf2d28b09def.vk":                    {"QmWV8rqZLxs1oQN9jxNWmnT1YdgLwCcscv94VARrhHf1T7", "59d2bf1857adc59a4f08fcf2afaa916b"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-2-b62098629d07946e9028127e70295ed996fe3ed25b0f9f88eb610a0ab4385a3c.params":                {"QmVkrXc1SLcpgcudK5J25HH93QvR9tNsVhVTYHm5UymXAz", "2170a91ad5bae22ea61f2ea766630322"},
	"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-2-b62098629d07946e9028127e70295ed996fe3ed25b0f9f88eb610a0ab4385a3c.vk":                    {"QmbfQjPD7EpzjhWGmvWAsyN2mAZ4PcYhsf3ujuhU9CSuBm", "6d3789148fb6466d07ee1e24d6292fd6"},
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
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		got, err := FileDigest(bufio.NewReaderSize(f, 1<<20))
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if got != want.Digest {
			return &DigestMismatchError{File: name, Got: got, Want: want.Digest}
		}
	}
	return nil
}
