# snarkd build. `make help` lists the targets.
GO        ?= go
NVCC      ?= nvcc
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/snarkd/snarkd/buildinfo.Version=$(VERSION)
TEST_TIMEOUT ?= 75m
# `make install` copies bin/snarkd to $(DESTDIR)$(PREFIX)/bin (PREFIX=$HOME/.local needs no root).
PREFIX    ?= /usr/local
# sm_90 SASS for Hopper plus compute_90 PTX so newer GPUs can JIT the kernels.
CUDA_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
NVCCFLAGS ?= -O3 -std=c++17 --expt-relaxed-constexpr -Xcompiler -fPIC,-O3 $(CUDA_ARCH)

# Packages whose tests exercise CUDA code; their test binaries go into the GPU bundle.
GPU_TEST_PKGS := ./gpu/... ./groth16/gpuprove/... ./prover/...

NATIVE_SRC := $(wildcard native/*.cu)
NATIVE_HDR := $(wildcard native/*.h native/*.cuh)
NATIVE_OBJ := $(patsubst native/%.cu,native/build/%.o,$(NATIVE_SRC))
NATIVE_LIB := native/build/libsnarkd_native.a
# cuda link flags carry the native library's hash (cuda.NativeLib): Go's build cache does not look
# at the library, and without it a rebuilt library could leave a cached binary on the old one.
CUDA_LDFLAGS = $(LDFLAGS) -X github.com/snarkd/snarkd/gpu/cuda.NativeLib=$(shell sha256sum $(NATIVE_LIB) | cut -c1-16)

.PHONY: all build install run demo test lint cuda native gpu-bundle release release-cuda clean help proto

all: build

help:
	@echo "build       bin/snarkd (CPU backend, no CUDA needed)"
	@echo "install     build and copy bin/snarkd to $(PREFIX)/bin (make install PREFIX=$$HOME/.local: no root)"
	@echo "run         build and start the daemon on 127.0.0.1:9810 with repo ~/.snarkd"
	@echo "demo        prove the built-in test circuit end to end through a scratch daemon"
	@echo "test        go test -race ./... (GPU tests skip without a GPU)"
	@echo "lint        gofmt check, go vet, staticcheck"
	@echo "cuda        compile native/ with nvcc and build bin/snarkd-cuda (-tags cuda)"
	@echo "gpu-bundle  cuda test binaries + run script in gpubundle/ for a GPU host"
	@echo "release     static binaries in dist/ (CPU build; CUDA build when nvcc is present) + SHA256SUMS"
	@echo "clean       remove build outputs"
	@echo "proto       regenerate the committed cuzk.v1 gRPC code (needs protoc)"

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/snarkd ./cmd/snarkd

install: build
	install -D -m 0755 bin/snarkd $(DESTDIR)$(PREFIX)/bin/snarkd
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "note: $(PREFIX)/bin is not on PATH";; esac

run: build
	./bin/snarkd run

# Proves the built-in test circuit through a scratch daemon's JSON-RPC API and prints timings.
demo: build
	scripts/demo.sh bin/snarkd

test:
	$(GO) test -race -timeout $(TEST_TIMEOUT) ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags cuda ./gpu/... ./groth16/gpuprove/... ./internal/bench/... ./prover/... ./cmd/...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags cuda ./gpu/... ./groth16/gpuprove/... ./internal/bench/... ./prover/... ./cmd/...

native/build/%.o: native/%.cu $(NATIVE_HDR)
	@mkdir -p native/build
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(NATIVE_LIB): $(NATIVE_OBJ)
	ar rcs $@ $^

native: $(NATIVE_LIB)

cuda: $(NATIVE_LIB)
	CGO_ENABLED=1 $(GO) build -trimpath -tags cuda -ldflags "$(CUDA_LDFLAGS)" -o bin/snarkd-cuda ./cmd/snarkd

# Test and benchmark binaries for a GPU host, which has no Go toolchain: copy gpubundle/ there
# (or carry it) and run gpubundle/run.sh.
gpu-bundle: $(NATIVE_LIB) cuda
	@rm -rf gpubundle && mkdir -p gpubundle
	@pkgs=$$($(GO) list -tags cuda -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' $(GPU_TEST_PKGS)) || exit 1; \
	for p in $$pkgs; do \
		name=$$(echo $$p | sed 's|github.com/snarkd/snarkd/||; s|/|_|g'); \
		echo "test binary $$name"; \
		CGO_ENABLED=1 $(GO) test -c -tags cuda -ldflags "$(CUDA_LDFLAGS)" -o gpubundle/$$name.test $$p || exit 1; \
	done
	cp bin/snarkd-cuda gpubundle/
	cp scripts/gpu-bundle-run.sh gpubundle/run.sh
	@echo "gpubundle/ ready: run gpubundle/run.sh on a GPU host"

# Release binaries, named snarkd[-cuda]-VERSION-OS-ARCH. The CPU build needs no cgo (blst is used
# only by tests), so CGO_ENABLED=0 gives a fully static binary. The CUDA build cannot be fully
# static: cudart_static dlopens the driver's libcuda.so.1, which needs the dynamic loader; it links
# cudart and libstdc++/libgcc statically and depends on glibc alone. -trimpath, the version
# ldflags and Go's content-derived build ID keep two builds of one commit byte-identical.
DIST      ?= dist
GOOS_     := $(shell $(GO) env GOOS)
GOARCH_   := $(shell $(GO) env GOARCH)
RELEASE_SUFFIX = $(VERSION)-$(GOOS_)-$(GOARCH_)
# A directory holding only libstdc++.a: searched before the compiler's own directory, it makes
# the -lstdc++ of gpu/cuda's cgo flags resolve to the static library.
STATIC_CXX_DIR := native/build/static-cxx

release:
	@rm -rf $(DIST) && mkdir -p $(DIST)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(DIST)/snarkd-$(RELEASE_SUFFIX) ./cmd/snarkd
	@if command -v $(NVCC) >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory release-cuda VERSION=$(VERSION); \
	else \
		echo "nvcc not found ($(NVCC)): skipping the CUDA build; $(DIST)/ has the CPU build only"; \
	fi
	cd $(DIST) && sha256sum snarkd-* > SHA256SUMS
	@echo "$(DIST)/:" && cat $(DIST)/SHA256SUMS

release-cuda: $(NATIVE_LIB)
	@mkdir -p $(STATIC_CXX_DIR) $(DIST)
	@lib=$$($(CXX) -print-file-name=libstdc++.a); case $$lib in /*) ;; *) echo "libstdc++.a not found ($(CXX) -print-file-name): install libstdc++-dev"; exit 1;; esac; \
		ln -sf "$$lib" $(STATIC_CXX_DIR)/libstdc++.a
	CGO_ENABLED=1 $(GO) build -trimpath -tags cuda \
		-ldflags "$(CUDA_LDFLAGS) -extldflags '-L$(CURDIR)/$(STATIC_CXX_DIR) -static-libgcc'" \
		-o $(DIST)/snarkd-cuda-$(RELEASE_SUFFIX) ./cmd/snarkd

clean:
	rm -rf bin gpubundle native/build $(DIST)

# The cuzk.v1 gRPC code (plugin/cuzk/proto/cuzk/v1) is generated and committed, so builds and CI need
# no protoc. Regenerating needs protoc (Debian: apt-get install protobuf-compiler, 3.21) and the
# two Go plugins, which this target installs at the pinned versions.
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
proto:
	@command -v protoc >/dev/null || { echo "protoc not found: apt-get install -y protobuf-compiler"; exit 1; }
	$(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	$(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	cd plugin/cuzk/proto && PATH="$$($(GO) env GOPATH)/bin:$$PATH" protoc \
		--go_out=. --go_opt=paths=source_relative \
		--go-grpc_out=. --go-grpc_opt=paths=source_relative \
		cuzk/v1/proving.proto
