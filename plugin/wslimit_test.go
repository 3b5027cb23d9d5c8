package plugin

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/rpcapi"
)

// wsFrame encodes one client frame (masked, as clients send them) with payload size n.
func wsFrame(fin bool, opcode byte, n int) []byte {
	b0 := opcode
	if fin {
		b0 |= 0x80
	}
	h := []byte{b0}
	switch {
	case n < 126:
		h = append(h, 0x80|byte(n))
	case n < 1<<16:
		h = append(h, 0x80|126, byte(n>>8), byte(n))
	default:
		h = append(h, 0x80|127)
		h = binary.BigEndian.AppendUint64(h, uint64(n))
	}
	h = append(h, 1, 2, 3, 4) // masking key
	return append(h, bytes.Repeat([]byte{'x'}, n)...)
}

func TestWSFrames(t *testing.T) {
	const limit = 70_000
	for _, tc := range []struct {
		name   string
		stream [][]byte
		over   bool
	}{
		{"small text", [][]byte{wsFrame(true, 1, 100)}, false},
		{"16-bit length at the limit", [][]byte{wsFrame(true, 2, 65_000)}, false},
		{"64-bit length over", [][]byte{wsFrame(true, 2, limit+1)}, true},
		{"messages each under", [][]byte{wsFrame(true, 1, 60_000), wsFrame(true, 1, 60_000)}, false},
		{"fragments summing over", [][]byte{wsFrame(false, 1, 40_000), wsFrame(true, 0, 40_000)}, true},
		{"pings between fragments do not count", [][]byte{wsFrame(false, 1, 35_000), wsFrame(true, 9, 125),
			wsFrame(true, 0, 34_000), wsFrame(true, 10, 125)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream := bytes.Join(tc.stream, nil)
			// Whole, and a byte at a time: the verdict does not depend on how reads split.
			for _, step := range []int{len(stream), 1, 7} {
				f := wsFrames{limit: limit}
				var err error
				for i := 0; i < len(stream) && err == nil; i += step {
					err = f.feed(stream[i:min(i+step, len(stream))])
				}
				if over := errors.Is(err, errWSMessageTooLarge); over != tc.over || (err != nil && !over) {
					t.Fatalf("reads of %d bytes: %v, want over the limit %v", step, err, tc.over)
				}
			}
		})
	}
}

// FuzzWSFrames: any byte stream, split anywhere, gets the same verdict as whole.
func FuzzWSFrames(f *testing.F) {
	f.Add(wsFrame(true, 1, 300), uint8(5))
	f.Add(append(wsFrame(false, 2, 200), wsFrame(true, 0, 900)...), uint8(1))
	f.Fuzz(func(t *testing.T, stream []byte, step uint8) {
		whole := wsFrames{limit: 1000}
		want := whole.feed(stream)
		split := wsFrames{limit: 1000}
		var got error
		n := int(step) + 1
		for i := 0; i < len(stream) && got == nil; i += n {
			got = split.feed(stream[i:min(i+n, len(stream))])
		}
		if (got == nil) != (want == nil) {
			t.Fatalf("whole: %v, in reads of %d: %v", want, n, got)
		}
	})
}

// TestWebsocketMessageLimit: over a websocket, a JSON-RPC call within the limit is answered, and
// a message over the caller's limit closes the connection; the daemon keeps serving.
func TestWebsocketMessageLimit(t *testing.T) {
	cfg := config.Default()
	cfg.API.MaxReadRequestBytes = 64 << 10
	base, d := openDaemon(t, cfg)
	url := "ws" + strings.TrimPrefix(base, "http") + RPCPath
	conn, resp, err := websocket.DefaultDialer.Dial(url, token(t, d, rpcapi.PermRead))
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer conn.Close()
	call := []byte(`{"jsonrpc":"2.0","method":"Prover.Version","params":[],"id":1}`)
	if err := conn.WriteMessage(websocket.TextMessage, call); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, msg, err := conn.ReadMessage(); err != nil || !bytes.Contains(msg, []byte(`"result"`)) {
		t.Fatalf("Version over a websocket: %s %v", msg, err)
	}
	big := append([]byte(`{"jsonrpc":"2.0","method":"Prover.Version","params":["`), bytes.Repeat([]byte{'a'}, 100<<10)...)
	big = append(big, `"],"id":2}`...)
	_ = conn.WriteMessage(websocket.TextMessage, big) // may fail once the daemon closes
	if _, msg, err := conn.ReadMessage(); err == nil {
		t.Fatalf("a message over the read limit was answered: %.100s", msg)
	}
	// The daemon still serves.
	api, closer, err := rpcapi.NewProverClient(context.Background(), base+RPCPath, token(t, d, rpcapi.PermRead))
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	if _, err := api.Version(context.Background()); err != nil {
		t.Fatalf("Version after the refused message: %v", err)
	}
}
