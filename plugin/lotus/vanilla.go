package lotus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/filecoin-project/go-jsonrpc"
	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/commcid"
	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/rpcapi"
)

// SectorIndex is the part of the miner's API a PoSt worker reads sectors through: the storage
// index that says which storage nodes hold a sector's files.
type SectorIndex interface {
	StorageFindSector(ctx context.Context, sector abi.SectorID, ft rpcapi.SectorFileType, ssize abi.SectorSize, allowFetch bool) ([]rpcapi.SectorStorageInfo, error)
}

// StorageAccess returns the miner's storage index and the Authorization header storage nodes
// accept (the miner API info's token, as lotus-worker sends it).
type StorageAccess func() (SectorIndex, http.Header, error)

// ErrNoMiner is returned by a PoSt call when the daemon is attached to no lotus-miner, so it
// has no storage index to read vanilla proofs through.
var ErrNoMiner = errors.New("no lotus-miner attached: a PoSt worker reads vanilla proofs through the miner's storage index (set Lotus.MinerAPIInfo)")

// UnreadableSectorError says a sector's vanilla proof could not be read: the index does not
// list it, or no storage node answered with it. WindowPoSt reports such sectors in Skipped;
// WinningPoSt fails.
type UnreadableSectorError struct {
	Sector abi.SectorID
	Err    error
}

func (e *UnreadableSectorError) Error() string {
	return fmt.Sprintf("reading the vanilla proof of sector %d of miner %d: %v", e.Sector.Number, e.Sector.Miner, e.Err)
}

func (e *UnreadableSectorError) Unwrap() error { return e.Err }

// BadVanillaError says a storage node answered 200 with bytes that are not the vanilla proof
// asked for (they do not decode for the proof type, or name another sector or comm_r). It fails
// the call: a node serving wrong proofs is a fault to see, not a sector to skip.
type BadVanillaError struct {
	Sector abi.SectorID
	URL    string
	Err    error
}

func (e *BadVanillaError) Error() string {
	return fmt.Sprintf("sector %d of miner %d: %s answered with a bad vanilla proof: %v", e.Sector.Number, e.Sector.Miner, e.URL, e.Err)
}

func (e *BadVanillaError) Unwrap() error { return e.Err }

// maxVanillaBytes bounds one vanilla proof read from a storage node. A 64GiB WinningPoSt
// vanilla proof (66 tree-R paths) is well under a megabyte.
const maxVanillaBytes = 16 << 20

// VanillaFetcher reads PoSt vanilla proofs from the miner's storage nodes, as lotus-worker's
// remote store does: StorageFindSector, then POST {BaseURL}/vanilla/single to each URL in turn
// until one answers 200.
type VanillaFetcher struct {
	access   StorageAccess
	parallel int
	timeout  time.Duration
	client   *http.Client
}

// NewVanillaFetcher reads at most parallel sectors at once, each within timeout (0: no limit).
// client nil uses a client of its own.
func NewVanillaFetcher(access StorageAccess, parallel int, timeout time.Duration, client *http.Client) *VanillaFetcher {
	if parallel < 1 {
		parallel = 1
	}
	if client == nil {
		client = &http.Client{}
	}
	return &VanillaFetcher{access: access, parallel: parallel, timeout: timeout, client: client}
}

// Fetch reads the vanilla proof of every sector. proofs[i] is sectors[i]'s proof, or nil with
// errs[i] an *UnreadableSectorError or *BadVanillaError. The error is for the call as a whole:
// no miner, or ctx ended (then no sector is judged unreadable).
func (f *VanillaFetcher) Fetch(ctx context.Context, p *post.Proof, mid abi.ActorID, sectors []rpcapi.PostSectorChallenge) (proofs [][]byte, errs []error, err error) {
	index, hdr, err := f.access()
	if err != nil {
		return nil, nil, err
	}
	proofs = make([][]byte, len(sectors))
	errs = make([]error, len(sectors))
	var (
		wg      sync.WaitGroup
		connMu  sync.Mutex
		connErr error
	)
	sem := make(chan struct{}, f.parallel)
	for i := range sectors {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			sctx := ctx
			if f.timeout > 0 {
				var cancel context.CancelFunc
				sctx, cancel = context.WithTimeout(ctx, f.timeout)
				defer cancel()
			}
			b, err := f.one(sctx, index, hdr, p, mid, sectors[i])
			var ce *jsonrpc.RPCConnectionError
			if errors.As(err, &ce) {
				connMu.Lock()
				connErr = err
				connMu.Unlock()
			}
			proofs[i], errs[i] = b, err
		}(i)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading vanilla proofs: %w", err)
	}
	if connErr != nil {
		// The miner's API is down: that says nothing about the sectors.
		return nil, nil, fmt.Errorf("reading vanilla proofs: the miner's storage index is unreachable: %w", connErr)
	}
	return proofs, errs, nil
}

// one reads one sector's vanilla proof, trying every URL the index lists for it.
func (f *VanillaFetcher) one(ctx context.Context, index SectorIndex, hdr http.Header, p *post.Proof, mid abi.ActorID, s rpcapi.PostSectorChallenge) ([]byte, error) {
	sid := abi.SectorID{Miner: mid, Number: s.SectorNumber}
	unreadable := func(err error) error { return &UnreadableSectorError{Sector: sid, Err: err} }
	ft := rpcapi.FTSealed | rpcapi.FTCache
	if s.Update {
		ft = rpcapi.FTUpdate | rpcapi.FTUpdateCache
	}
	infos, err := index.StorageFindSector(ctx, sid, ft, 0, false)
	if err != nil {
		var ce *jsonrpc.RPCConnectionError
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, unreadable(fmt.Errorf("StorageFindSector: %w", err))
	}
	body, err := json.Marshal(rpcapi.SingleVanillaParams{Miner: mid, Sector: s, ProofType: p.Proof})
	if err != nil {
		return nil, fmt.Errorf("encoding the vanilla request: %w", err)
	}
	var (
		tried []string
		bad   *BadVanillaError
	)
	for _, info := range infos {
		for _, base := range info.BaseURLs {
			url := strings.TrimSuffix(base, "/") + "/vanilla/single"
			b, err := f.post(ctx, url, hdr, body)
			if err == nil {
				if err = checkVanilla(p, s, b); err == nil {
					return b, nil
				}
				bad = &BadVanillaError{Sector: sid, URL: url, Err: err}
				log.Warnw("storage node answered with a bad vanilla proof; trying the next", "sector", s.SectorNumber, "url", url, "err", err)
				continue
			}
			if ctx.Err() != nil {
				return nil, unreadable(fmt.Errorf("%s: %w", url, ctx.Err()))
			}
			log.Debugw("vanilla proof not read from this storage node", "sector", s.SectorNumber, "store", info.ID, "url", url, "err", err)
			tried = append(tried, err.Error())
		}
	}
	switch {
	case bad != nil:
		return nil, bad
	case len(tried) == 0:
		return nil, unreadable(errors.New("the miner's storage index lists no storage URL for it"))
	}
	return nil, unreadable(errors.New(strings.Join(tried, "; ")))
}

// errNotFound is a storage node's 404: it does not hold the sector.
var errNotFound = errors.New("not found")

// post sends one /vanilla/single request and returns the body of a 200 answer.
func (f *VanillaFetcher) post(ctx context.Context, url string, hdr http.Header, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	for k, v := range hdr {
		req.Header[k] = append([]string(nil), v...)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err // *url.Error names the URL
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxVanillaBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %w", url, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%s: %w", url, errNotFound)
	case resp.StatusCode != http.StatusOK:
		msg := strings.TrimSpace(string(b))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return nil, fmt.Errorf("%s: HTTP %d: %s", url, resp.StatusCode, msg)
	case len(b) > maxVanillaBytes:
		return nil, fmt.Errorf("%s: answer larger than %d bytes", url, maxVanillaBytes)
	}
	return b, nil
}

// checkVanilla checks that b decodes as a vanilla proof of proof type p for the challenged
// sector, and carries its comm_r when the challenge names one. Whether the Merkle paths open
// the challenged leaves is the prover's check.
func checkVanilla(p *post.Proof, s rpcapi.PostSectorChallenge, b []byte) error {
	v, err := post.DecodeSectorVanilla(p, b)
	if err != nil {
		return fmt.Errorf("not a %s vanilla proof: %w", p.Name, err)
	}
	if v.SectorID != uint64(s.SectorNumber) {
		return fmt.Errorf("it is the proof of sector %d", v.SectorID)
	}
	if s.SealedCID.Defined() {
		commR, err := commcid.Sealed(s.SealedCID, "challenge SealedCID")
		if err != nil {
			return err
		}
		if !bytes.Equal(commR[:], v.CommR[:]) {
			return fmt.Errorf("its comm_r %x is not the sector's %s", v.CommR[:], s.SealedCID)
		}
	}
	return nil
}
