package cuzk

import (
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
)

// TestWireNumbers pins the field numbers, enum values and method names Curio's client sends:
// renumbering any of them would silently break a Curio node pointed at snarkd.
func TestWireNumbers(t *testing.T) {
	fields := map[protoreflect.ProtoMessage]map[string]protoreflect.FieldNumber{
		&pb.SubmitProofRequest{}: {"request_id": 1, "proof_kind": 2, "sector_size": 3, "registered_proof": 4, "priority": 5,
			"vanilla_proof": 10, "vanilla_proofs": 11, "sector_number": 20, "miner_id": 21, "randomness": 22, "partition_index": 23,
			"comm_r_old": 30, "comm_r_new": 31, "comm_d_new": 32},
		&pb.SubmitProofResponse{}: {"job_id": 1, "queue_position": 2, "assigned_gpu": 3},
		&pb.AwaitProofRequest{}:   {"job_id": 1, "timeout_ms": 2},
		&pb.AwaitProofResponse{}: {"job_id": 1, "status": 2, "proof": 3, "error_message": 4, "queue_wait_ms": 10, "srs_load_ms": 11,
			"synthesis_ms": 12, "gpu_compute_ms": 13, "total_ms": 14},
		&pb.ProveRequest{}:        {"submit": 1},
		&pb.ProveResponse{}:       {"result": 1},
		&pb.CancelProofRequest{}:  {"job_id": 1},
		&pb.CancelProofResponse{}: {"was_running": 1},
		&pb.GetStatusResponse{}: {"gpus": 1, "loaded_srs": 2, "queues": 3, "total_proofs_completed": 4, "total_proofs_failed": 5,
			"uptime_seconds": 6, "pinned_memory_bytes": 7, "pinned_memory_limit_bytes": 8},
		&pb.GPUStatus{}: {"ordinal": 1, "name": 2, "vram_total_bytes": 3, "vram_free_bytes": 4, "current_job_id": 5,
			"current_proof_kind": 6},
		&pb.SRSStatus{}:          {"circuit_id": 1, "tier": 2, "size_bytes": 3, "ref_count": 4},
		&pb.QueueStatus{}:        {"proof_kind": 1, "pending": 2, "in_progress": 3},
		&pb.PreloadSrsRequest{}:  {"circuit_id": 1},
		&pb.PreloadSrsResponse{}: {"already_loaded": 1, "load_time_ms": 2},
		&pb.EvictSrsRequest{}:    {"circuit_id": 1},
		&pb.EvictSrsResponse{}:   {"was_loaded": 1, "freed_bytes": 2},
		&pb.GetMetricsResponse{}: {"prometheus_text": 1},
	}
	for msg, want := range fields {
		d := msg.ProtoReflect().Descriptor()
		if d.ParentFile().Package() != "cuzk.v1" {
			t.Errorf("%s: package %s", d.FullName(), d.ParentFile().Package())
		}
		for name, num := range want {
			f := d.Fields().ByName(protoreflect.Name(name))
			if f == nil || f.Number() != num {
				t.Errorf("%s.%s: %v, want field %d", d.Name(), name, f, num)
			}
		}
	}
	enums := map[protoreflect.EnumDescriptor]map[string]protoreflect.EnumNumber{
		pb.ProofKind(0).Descriptor(): {"PROOF_KIND_UNSPECIFIED": 0, "POREP_SEAL_COMMIT": 1, "SNAP_DEALS_UPDATE": 2,
			"WINDOW_POST_PARTITION": 3, "WINNING_POST": 4},
		pb.Priority(0).Descriptor():                  {"PRIORITY_UNSPECIFIED": 0, "LOW": 1, "NORMAL": 2, "HIGH": 3, "CRITICAL": 4},
		pb.AwaitProofResponse_Status(0).Descriptor(): {"UNKNOWN": 0, "COMPLETED": 1, "FAILED": 2, "CANCELLED": 3, "TIMEOUT": 4},
		pb.SRSStatus_Tier(0).Descriptor():            {"HOT": 0, "WARM": 1, "COLD": 2},
	}
	for e, want := range enums {
		for name, num := range want {
			v := e.Values().ByName(protoreflect.Name(name))
			if v == nil || v.Number() != num {
				t.Errorf("%s.%s: %v, want %d", e.Name(), name, v, num)
			}
		}
	}
	methods := []string{"SubmitProof", "AwaitProof", "Prove", "CancelProof", "GetStatus", "GetMetrics", "PreloadSRS", "EvictSRS"}
	if pb.ProvingEngine_ServiceDesc.ServiceName != "cuzk.v1.ProvingEngine" || len(pb.ProvingEngine_ServiceDesc.Methods) != len(methods) {
		t.Fatalf("service %s with %d methods", pb.ProvingEngine_ServiceDesc.ServiceName, len(pb.ProvingEngine_ServiceDesc.Methods))
	}
	for i, m := range pb.ProvingEngine_ServiceDesc.Methods {
		if m.MethodName != methods[i] {
			t.Errorf("method %d is %s, want %s", i, m.MethodName, methods[i])
		}
	}
}

// TestProtoGoPackage: the committed descriptor's go_package names where the generated code
// lives, so that `make proto` writes it back to the same package.
func TestProtoGoPackage(t *testing.T) {
	opts, ok := pb.File_cuzk_v1_proving_proto.Options().(*descriptorpb.FileOptions)
	if !ok {
		t.Fatal("no file options in the descriptor")
	}
	const want = "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1;cuzkv1"
	if got := opts.GetGoPackage(); got != want {
		t.Fatalf("go_package %q, want %q", got, want)
	}
	if path := reflect.TypeFor[pb.GetStatusRequest]().PkgPath(); !strings.HasPrefix(want, path+";") {
		t.Fatalf("the generated code lives in %s, its go_package says %s", path, want)
	}
}
