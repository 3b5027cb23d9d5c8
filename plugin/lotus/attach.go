package lotus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/filecoin-project/go-jsonrpc"
	"github.com/google/uuid"

	"github.com/snarkd/snarkd/plugin/auth"
	"github.com/snarkd/snarkd/rpcapi"
)

// Attacher keeps the daemon registered with one lotus-miner: it calls WorkerConnect, polls the
// miner's Session and registers again when the UUID changes (a miner restart), and lends the
// miner client to the result deliverer. A new Attach replaces the previous miner.
type Attacher struct {
	verifier  *auth.Verifier
	heartbeat time.Duration

	mu      sync.Mutex
	cur     *attachment
	changed chan struct{} // closed and replaced whenever the connection state changes
	parent  context.Context
	wg      sync.WaitGroup
}

type attachment struct {
	info      rpcapi.APIInfo
	url       string
	workerURL string
	client    rpcapi.Miner
	closer    jsonrpc.ClientCloser
	cancel    context.CancelFunc

	connected  bool
	session    uuid.UUID
	lastErr    string
	registered time.Time
}

// NewAttacher returns an attacher whose loops stop when ctx ends. verifier learns the miner's
// AuthVerify, so tokens the miner mints are accepted.
func NewAttacher(ctx context.Context, verifier *auth.Verifier, heartbeat time.Duration) *Attacher {
	return &Attacher{verifier: verifier, heartbeat: heartbeat, changed: make(chan struct{}), parent: ctx}
}

// Attach connects to the miner at apiInfo (TOKEN:MULTIADDR, admin) and registers workerURL
// with WorkerConnect. With wait, the first registration must succeed (its error is returned);
// without, Attach returns at once and the loop keeps trying.
func (a *Attacher) Attach(ctx context.Context, apiInfo, workerURL string, wait bool) error {
	info, err := rpcapi.ParseAPIInfo(apiInfo)
	if err != nil {
		return fmt.Errorf("miner API info: %w", err)
	}
	url, err := info.URL("http")
	if err != nil {
		return fmt.Errorf("miner API info: %w", err)
	}
	if workerURL == "" {
		return fmt.Errorf("no worker URL for the miner to dial back: set Lotus.WorkerURL")
	}
	client, closer, err := rpcapi.NewMinerClient(a.parent, url, info.Header())
	if err != nil {
		return fmt.Errorf("dialing miner %s: %w", url, err)
	}
	att := &attachment{info: info, url: url, workerURL: workerURL, client: client, closer: closer}
	if wait {
		if err := a.register(ctx, att); err != nil {
			closer()
			// Keep trusting the miner we had, not the one that failed.
			a.mu.Lock()
			prev := a.cur
			a.mu.Unlock()
			if prev != nil {
				a.verifier.SetRemote(remoteVerify(prev.client))
			} else {
				a.verifier.SetRemote(nil)
			}
			return err
		}
	}
	lctx, cancel := context.WithCancel(a.parent)
	att.cancel = cancel
	a.mu.Lock()
	old := a.cur
	a.cur = att
	a.notifyLocked()
	a.mu.Unlock()
	if old != nil {
		old.cancel()
		old.closer()
	}
	a.verifier.SetRemote(remoteVerify(client))
	a.wg.Add(1)
	go a.loop(lctx, att, wait)
	return nil
}

func remoteVerify(m rpcapi.Miner) auth.RemoteVerify {
	return func(ctx context.Context, token string) ([]rpcapi.Permission, error) {
		return m.AuthVerify(ctx, token)
	}
}

// register checks the miner's version and asks it to connect to us.
func (a *Attacher) register(ctx context.Context, att *attachment) error {
	// The miner authenticates its calls to us with a token from its own secret.
	a.verifier.SetRemote(remoteVerify(att.client))
	v, err := att.client.Version(ctx)
	if err != nil {
		return fmt.Errorf("miner %s Version: %w", att.url, err)
	}
	if !v.APIVersion.EqMajorMinor(rpcapi.MinerAPIVersion0) {
		return fmt.Errorf("miner %s speaks API %s, want %s", att.url, v.APIVersion, rpcapi.MinerAPIVersion0)
	}
	sess, err := att.client.Session(ctx)
	if err != nil {
		return fmt.Errorf("miner %s Session: %w", att.url, err)
	}
	if err := att.client.WorkerConnect(ctx, att.workerURL); err != nil {
		return fmt.Errorf("miner %s WorkerConnect(%s): %w", att.url, att.workerURL, err)
	}
	a.mu.Lock()
	att.session, att.connected, att.lastErr, att.registered = sess, true, "", time.Now()
	a.notifyLocked()
	a.mu.Unlock()
	log.Infow("registered with lotus-miner", "miner", att.url, "session", sess, "worker", att.workerURL)
	return nil
}

func (a *Attacher) loop(ctx context.Context, att *attachment, registered bool) {
	defer a.wg.Done()
	t := time.NewTicker(a.heartbeat)
	defer t.Stop()
	for {
		if !registered {
			if err := a.register(ctx, att); err != nil {
				a.setErr(att, err)
				log.Warnw("registering with lotus-miner failed; retrying", "err", err)
			} else {
				registered = true
			}
		} else {
			sess, err := att.client.Session(ctx)
			switch {
			case err != nil:
				a.setErr(att, fmt.Errorf("miner Session: %w", err))
				log.Warnw("heartbeat: miner session check failed", "miner", att.url, "err", err)
			default:
				a.mu.Lock()
				changed := sess != att.session
				if !att.connected {
					att.connected, att.lastErr = true, ""
					a.notifyLocked()
				}
				a.mu.Unlock()
				if changed {
					log.Warnw("lotus-miner restarted; registering again", "old", att.session, "new", sess)
					registered = false
					continue
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (a *Attacher) setErr(att *attachment, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	att.lastErr = err.Error()
	if att.connected {
		att.connected = false
		a.notifyLocked()
	}
}

func (a *Attacher) notifyLocked() {
	close(a.changed)
	a.changed = make(chan struct{})
}

// Miner returns the connected miner's client, waiting until there is one or ctx ends.
func (a *Attacher) Miner(ctx context.Context) (rpcapi.Miner, error) {
	for {
		a.mu.Lock()
		cur, ch := a.cur, a.changed
		a.mu.Unlock()
		if cur != nil && cur.connected {
			return cur.client, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
		}
	}
}

// Storage is the attached miner as a storage index, with the Authorization header of its API
// info, which the miner's storage nodes accept on /remote (lotus-worker sends the same). It
// does not wait: a miner that calls a PoSt worker is attached.
func (a *Attacher) Storage() (SectorIndex, http.Header, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur == nil {
		return nil, nil, ErrNoMiner
	}
	return a.cur.client, a.cur.info.Header(), nil
}

// Status describes the attachment (nil when no miner was ever configured).
func (a *Attacher) Status() *rpcapi.MinerStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur == nil {
		return nil
	}
	s := &rpcapi.MinerStatus{URL: a.cur.url, WorkerURL: a.cur.workerURL, Connected: a.cur.connected,
		LastError: a.cur.lastErr, Registered: a.cur.registered}
	if a.cur.session != uuid.Nil {
		s.Session = a.cur.session.String()
	}
	return s
}

// Close stops the loop and closes the client.
func (a *Attacher) Close() {
	a.mu.Lock()
	cur := a.cur
	a.cur = nil
	a.mu.Unlock()
	if cur != nil {
		cur.cancel()
		cur.closer()
	}
	a.wg.Wait()
}

// WorkerURL derives the URL a miner dials back from the address the API listens on. A wildcard
// address (0.0.0.0, [::]) names no host the miner can dial: its error wraps ErrWildcardListen,
// and RoutableWorkerURL derives one instead.
func WorkerURL(listen net.Addr) (string, error) {
	tcp, ok := listen.(*net.TCPAddr)
	if !ok {
		return "", fmt.Errorf("listen address %s is not TCP", listen)
	}
	if tcp.IP.IsUnspecified() {
		return "", fmt.Errorf("the API listens on %s: %w", listen, ErrWildcardListen)
	}
	return workerURL(tcp.IP, tcp.Port), nil
}

// ErrWildcardListen is WorkerURL's error for a listen address on every interface.
var ErrWildcardListen = errors.New("every interface, which names no address for the miner to dial: set Lotus.WorkerURL (--worker-url)")

func workerURL(ip net.IP, port int) string {
	return fmt.Sprintf("http://%s/rpc/v0", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
}

// MinerDialTimeout bounds the connection RoutableWorkerURL opens to the miner.
const MinerDialTimeout = 30 * time.Second

// RoutableWorkerURL derives the URL a miner dials back when the API listens on every interface,
// as lotus-worker does for `--listen 0.0.0.0:PORT`: it opens a TCP connection to the miner's API
// address (minerAPIInfo, TOKEN:MULTIADDR) and takes the local address of that connection, which
// is the address of the interface the host routes to the miner by, with the API's port. Unlike
// lotus-worker it also handles IPv6 local addresses.
func RoutableWorkerURL(ctx context.Context, minerAPIInfo string, listen net.Addr) (string, error) {
	tcp, ok := listen.(*net.TCPAddr)
	if !ok {
		return "", fmt.Errorf("listen address %s is not TCP", listen)
	}
	info, err := rpcapi.ParseAPIInfo(minerAPIInfo)
	if err != nil {
		return "", fmt.Errorf("miner API info: %w", err)
	}
	minerURL, err := info.URL("http")
	if err != nil {
		return "", fmt.Errorf("miner API info: %w", err)
	}
	u, err := url.Parse(minerURL)
	if err != nil {
		return "", fmt.Errorf("miner API info: %w", err)
	}
	d := net.Dialer{Timeout: MinerDialTimeout}
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return "", fmt.Errorf("connecting to the miner at %s to learn this host's address on its network: %w", u.Host, err)
	}
	defer conn.Close()
	local, ok := conn.LocalAddr().(*net.TCPAddr)
	if !ok || local.IP.IsUnspecified() {
		return "", fmt.Errorf("connection to the miner at %s has no usable local address (%s)", u.Host, conn.LocalAddr())
	}
	return workerURL(local.IP, tcp.Port), nil
}
