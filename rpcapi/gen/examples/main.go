// Command examples prints example JSON for every method of rpcapi's Prover, Worker and Miner
// APIs (params and result), built from their Go types the way Lotus's docgen does. rpcapi/gen
// runs it to put examples into docs/api.md.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"time"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/google/uuid"
	"github.com/ipfs/go-cid"

	"github.com/snarkd/snarkd/rpcapi"
)

// Example is one method's example call.
type Example struct {
	Params []interface{}
	Result interface{} `json:",omitempty"`
	Stream bool        `json:",omitempty"`
}

var (
	specials  = map[reflect.Type]interface{}{}
	exampleID = uuid.MustParse("07070707-0707-0707-0707-070707070707")
)

func init() {
	add := func(v interface{}) { specials[reflect.TypeOf(v)] = v }
	add(exampleID)
	add(cid.MustParse("bafy2bzacea3wsdh6y3a36tb3skempjoxqpuyompjbmfeyf34fi3uy6uue42v4"))
	add(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	add(json.RawMessage(`{}`))
	add([]byte("byte array"))
	add(rpcapi.Commit1Out(`{"registered_proof":"StackedDrg32GiBV1_1",...}`))
	add(rpcapi.Proof("192 bytes per partition"))
	add(rpcapi.ProofKind(rpcapi.KindTest))
	add(rpcapi.JobState(rpcapi.JobDone))
	add(rpcapi.JobOrigin(rpcapi.OriginNative))
	add(rpcapi.EventType(rpcapi.EventProving))
	add(rpcapi.TaskType(rpcapi.TTCommit2))
	add(rpcapi.Permission(rpcapi.PermWrite))
	add(rpcapi.JobID("5e0c6a63-4c47-4d4e-9d3e-7d5b7e7a8b9c"))
	add(rpcapi.Priority(rpcapi.PrioritySeal))
	add(rpcapi.APIVersion(rpcapi.WorkerAPIVersion0))
	add(rpcapi.ErrorCode(rpcapi.ErrUnknown))
	add(rpcapi.SectorFileType(rpcapi.FTSealed | rpcapi.FTCache))
	add(rpcapi.StorageID("76f1988b-ef30-4d7e-b3ec-9a627f4ba5a8"))
	add(abi.RegisteredSealProof(8))
	add(abi.RegisteredPoStProof(13))
	add(abi.RegisteredUpdateProof(3))
	add(abi.ActorID(1000))
	add(abi.SectorNumber(9))
	add(abi.SectorSize(34359738368))
	add(abi.PoStRandomness("32-byte randomness.............."))
	add(abi.SealRandomness("32-byte ticket.................."))
	add(abi.InteractiveSealRandomness("32-byte seed...................."))
	add(abi.RegisteredAggregationProof(abi.RegisteredAggregationProof_SnarkPackV2))
}

func example(t reflect.Type, depth int) reflect.Value {
	if v, ok := specials[t]; ok {
		return reflect.ValueOf(v)
	}
	if depth > 6 {
		return reflect.Zero(t)
	}
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		v.SetString("string value")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(42)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(42)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Slice:
		v = reflect.MakeSlice(t, 1, 1)
		v.Index(0).Set(example(t.Elem(), depth+1))
	case reflect.Map:
		v = reflect.MakeMap(t)
		v.SetMapIndex(example(t.Key(), depth+1), example(t.Elem(), depth+1))
	case reflect.Ptr:
		v = reflect.New(t.Elem())
		v.Elem().Set(example(t.Elem(), depth+1))
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() {
				v.Field(i).Set(example(t.Field(i).Type, depth+1))
			}
		}
	case reflect.Array:
		for i := 0; i < t.Len(); i++ {
			v.Index(i).Set(example(t.Elem(), depth+1))
		}
	}
	return v
}

func examples(methods reflect.Type, ns string, out map[string]Example) {
	for i := 0; i < methods.NumField(); i++ {
		f := methods.Field(i)
		ft := f.Type
		ex := Example{Params: []interface{}{}}
		for k := 1; k < ft.NumIn(); k++ {
			ex.Params = append(ex.Params, example(ft.In(k), 0).Interface())
		}
		if ft.NumOut() == 2 {
			rt := ft.Out(0)
			if rt.Kind() == reflect.Chan {
				rt, ex.Stream = rt.Elem(), true
			}
			ex.Result = example(rt, 0).Interface()
		}
		out[ns+"."+f.Name] = ex
	}
}

func main() {
	out := map[string]Example{}
	examples(reflect.TypeOf(rpcapi.ProverMethods{}), "Prover", out)
	examples(reflect.TypeOf(rpcapi.WorkerMethods{}), "Worker", out)
	examples(reflect.TypeOf(rpcapi.MinerMethods{}), "Miner", out)
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "examples:", err)
		os.Exit(1)
	}
}
