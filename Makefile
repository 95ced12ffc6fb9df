# seaccess: `make demo` and `make test` are all a new user needs (see README).
SHELL := /bin/bash
CARGO ?= cargo
ORACLE := target/oracle/sepol-oracle
ORACLE_SRC := ../shared/tools/sepol-oracle
DEFAULT_POLICY := /etc/selinux/default/policy/policy.33
FUZZ_SECONDS ?= 60

.PHONY: all deps build oracle peers policies demo test lint bench fuzz clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	$(CARGO) build --release --workspace

# libsepol's answers, for the differential tests and the benchmark.
oracle: deps
	@if [ -d "$(ORACLE_SRC)" ]; then \
		$(MAKE) -s -C $(ORACLE_SRC) OUT=$(CURDIR)/target/oracle; \
	else \
		echo "note: $(ORACLE_SRC) not found; differential tests will be skipped" >&2; \
	fi

# libselinux's own AVC, measured beside seaccess's by `seaccess bench avc`.
peers: deps
	@$(MAKE) -s -C crates/lab/peers/libselinux-avc OUT=$(CURDIR)/target/peers

# The project's own test policies, compiled at every version each supports.
policies: deps
	@bash testdata/policies/compile.sh target/policies

demo: build policies
	./target/release/seaccess tour

# The workspace lints (no unwrap/expect/panic in library code, no unsafe) as errors.
lint: deps
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings

test: deps oracle peers policies lint
	SEACCESS_REQUIRE_ORACLE=$$([ -x $(ORACLE) ] && echo 1 || echo 0) \
	$(CARGO) test --release --workspace
	bash tests/cli.sh

bench: build oracle peers
	./target/release/seaccess bench engine --policy $(DEFAULT_POLICY)
	./target/release/seaccess bench avc --policy $(DEFAULT_POLICY)

fuzz:
	bash fuzz/run.sh $(FUZZ_SECONDS)

clean:
	$(CARGO) clean
