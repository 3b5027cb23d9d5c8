package rpcapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/filecoin-project/go-jsonrpc"
)

// RPCErrors registers snarkd's typed errors with go-jsonrpc so that clients get the same Go
// types back (with their fields, carried in the error's "meta"). go-jsonrpc matches the exact
// dynamic type, so servers must return these pointers unwrapped.
var RPCErrors = jsonrpc.NewErrors()

// Error codes of the typed errors (JSON-RPC "code"). They start at 1001 because a lotus-miner
// decodes the worker's errors with Lotus's own registry, which uses 2..13 (code 2 is "call ran
// out of gas"): a code of ours there would reach the miner as a different error.
const (
	CodePermission      jsonrpc.ErrorCode = 1001 + iota
	CodeBadRequest                        // 1002
	CodeNotSupportedYet                   // 1003
	CodeQueueFull                         // 1004
	CodeJobNotFound                       // 1005
	CodeRequestConflict                   // 1006
	CodeJobFailed                         // 1007
	CodeJobCancelled                      // 1008
	CodeShuttingDown                      // 1009
	CodeDraining                          // 1010
)

func init() {
	RPCErrors.Register(CodePermission, new(*ErrPermission))
	RPCErrors.Register(CodeBadRequest, new(*ErrBadRequest))
	RPCErrors.Register(CodeNotSupportedYet, new(*ErrNotSupportedYet))
	RPCErrors.Register(CodeQueueFull, new(*ErrQueueFull))
	RPCErrors.Register(CodeJobNotFound, new(*ErrJobNotFound))
	RPCErrors.Register(CodeRequestConflict, new(*ErrRequestConflict))
	RPCErrors.Register(CodeJobFailed, new(*ErrJobFailed))
	RPCErrors.Register(CodeJobCancelled, new(*ErrJobCancelled))
	RPCErrors.Register(CodeShuttingDown, new(*ErrShuttingDown))
	RPCErrors.Register(CodeDraining, new(*ErrDraining))
}

// ErrNotSupported is Lotus's answer for a worker method this worker does not implement. Lotus
// leaves it unregistered, so it travels as code 1 with the message "method not supported".
var ErrNotSupported = errors.New("method not supported")

// ErrPermission refuses a call whose token lacks the method's permission.
type ErrPermission struct {
	Method string
	Need   Permission
}

func (e *ErrPermission) Error() string {
	return fmt.Sprintf("missing permission to invoke '%s' (need '%s')", e.Method, e.Need)
}

// ErrBadRequest names the field of a request that cannot be proved and why.
type ErrBadRequest struct {
	Field  string
	Reason string
}

func (e *ErrBadRequest) Error() string {
	return fmt.Sprintf("invalid proof request: %s: %s", e.Field, e.Reason)
}

// ErrNotSupportedYet answers proof kinds whose circuits snarkd does not have yet.
type ErrNotSupportedYet struct {
	Kind   ProofKind
	Reason string
}

func (e *ErrNotSupportedYet) Error() string {
	return fmt.Sprintf("proof kind %q is not supported yet: %s", e.Kind, e.Reason)
}

// ErrQueueFull refuses a submission while the queue holds its configured maximum of jobs.
type ErrQueueFull struct {
	Limit int
}

func (e *ErrQueueFull) Error() string {
	return fmt.Sprintf("job queue full (%d jobs waiting or running); retry later", e.Limit)
}

// ErrJobNotFound names a job ID the daemon does not know.
type ErrJobNotFound struct {
	JobID JobID
}

func (e *ErrJobNotFound) Error() string { return fmt.Sprintf("job %s not found", e.JobID) }

// ErrRequestConflict refuses a request ID reused for a different request.
type ErrRequestConflict struct {
	RequestID string
	JobID     JobID
	// State is the state of JobID when the request was refused (empty from older daemons): a
	// client can tell a job still in progress from a done one it would have to resubmit under
	// another ID.
	State JobState `json:",omitempty"`
}

func (e *ErrRequestConflict) Error() string {
	if e.State == "" {
		return fmt.Sprintf("request ID %q already names job %s with different content", e.RequestID, e.JobID)
	}
	return fmt.Sprintf("request ID %q already names job %s (%s) with different content", e.RequestID, e.JobID, e.State)
}

// ErrJobFailed reports a job that ended without a proof.
type ErrJobFailed struct {
	JobID   JobID
	Message string
}

func (e *ErrJobFailed) Error() string { return fmt.Sprintf("job %s failed: %s", e.JobID, e.Message) }

// ErrJobCancelled reports a job that was cancelled before it produced a proof.
type ErrJobCancelled struct {
	JobID JobID
}

func (e *ErrJobCancelled) Error() string { return fmt.Sprintf("job %s was cancelled", e.JobID) }

// ErrShuttingDown refuses new work while the daemon stops.
type ErrShuttingDown struct{}

func (e *ErrShuttingDown) Error() string { return "snarkd is shutting down" }

// ErrDraining refuses new work while the daemon drains before it stops (a signal, `snarkd stop`
// or the Lotus Shutdown call): its running jobs finish within Jobs.DrainGrace, its queued jobs
// stay in the journal for the next start, and it takes nothing new, so a client should send the
// request to another prover or retry once this one has restarted.
type ErrDraining struct {
	// Until is when the drain's grace ends: what still runs then is handed back and the
	// daemon exits.
	Until time.Time `json:",omitempty"`
}

func (e *ErrDraining) Error() string {
	msg := "snarkd is draining before it stops and takes no new work (running jobs finish, queued ones are proved after its restart); send the request to another prover or retry once it has restarted"
	if !e.Until.IsZero() {
		msg += fmt.Sprintf(" (it exits by %s)", e.Until.UTC().Format(time.RFC3339))
	}
	return msg
}

// The typed errors carry their fields in JSON-RPC "meta" so clients see them, not just text.
// Local alias types avoid recursing into these methods.

func (e *ErrPermission) MarshalJSON() ([]byte, error) {
	type t ErrPermission
	return json.Marshal((*t)(e))
}
func (e *ErrPermission) UnmarshalJSON(b []byte) error {
	type t ErrPermission
	return json.Unmarshal(b, (*t)(e))
}
func (e *ErrBadRequest) MarshalJSON() ([]byte, error) {
	type t ErrBadRequest
	return json.Marshal((*t)(e))
}
func (e *ErrBadRequest) UnmarshalJSON(b []byte) error {
	type t ErrBadRequest
	return json.Unmarshal(b, (*t)(e))
}
func (e *ErrNotSupportedYet) MarshalJSON() ([]byte, error) {
	type t ErrNotSupportedYet
	return json.Marshal((*t)(e))
}
func (e *ErrNotSupportedYet) UnmarshalJSON(b []byte) error {
	type t ErrNotSupportedYet
	return json.Unmarshal(b, (*t)(e))
}
func (e *ErrQueueFull) MarshalJSON() ([]byte, error) {
	type t ErrQueueFull
	return json.Marshal((*t)(e))
}
func (e *ErrQueueFull) UnmarshalJSON(b []byte) error {
	type t ErrQueueFull
	return json.Unmarshal(b, (*t)(e))
}
func (e *ErrJobNotFound) MarshalJSON() ([]byte, error) {
	type t ErrJobNotFound
	return json.Marshal((*t)(e))
}
func (e *ErrJobNotFound) UnmarshalJSON(b []byte) error {
	type t ErrJobNotFound
	return json.Unmarshal(b, (*t)(e))
}
func (e *ErrRequestConflict) MarshalJSON() ([]byte, error) {
	type t ErrRequestConflict
	return json.Marshal((*t)(e))
}
func (e *ErrRequestConflict) UnmarshalJSON(b []byte) error {
	type t ErrRequestConflict
	return json.Unmarshal(b, (*t)(e))
}
func (e *ErrJobFailed) MarshalJSON() ([]byte, error) {
	type t ErrJobFailed
	return json.Marshal((*t)(e))
}
func (e *ErrJobFailed) UnmarshalJSON(b []byte) error {
	type t ErrJobFailed
	return json.Unmarshal(b, (*t)(e))
}
func (e *ErrJobCancelled) MarshalJSON() ([]byte, error) {
	type t ErrJobCancelled
	return json.Marshal((*t)(e))
}
func (e *ErrJobCancelled) UnmarshalJSON(b []byte) error {
	type t ErrJobCancelled
	return json.Unmarshal(b, (*t)(e))
}
func (e *ErrShuttingDown) MarshalJSON() ([]byte, error) { return []byte("{}"), nil }
func (e *ErrShuttingDown) UnmarshalJSON(b []byte) error { return nil }
func (e *ErrDraining) MarshalJSON() ([]byte, error) {
	type t ErrDraining
	return json.Marshal((*t)(e))
}
func (e *ErrDraining) UnmarshalJSON(b []byte) error {
	type t ErrDraining
	return json.Unmarshal(b, (*t)(e))
}
