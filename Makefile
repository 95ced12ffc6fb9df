# seaccess: `make demo` and `make test` are all a new user needs (see README).
SHELL := /bin/bash
CARGO ?= cargo
ORACLE := target/oracle/sepol-oracle
REFPOLICY := target/refpolicy
DEFAULT_POLICY := /etc/selinux/default/policy/policy.33
FUZZ_SECONDS ?= 60
# The Cargo profile `capi`, `python` and their tests build: release, except under `make test`,
# which builds everything once under `ci` (release optimisation without LTO or debug information,
# a quarter of the build time; Cargo.toml) and passes PROFILE=ci down.
PROFILE ?= release
BUILD := target/$(PROFILE)
# How capi and kernel-test build what they run. Under `make test` (PROFILE=ci) they ask Cargo for
# what `cargo test --workspace` already built: a single package (`-p`) leaves out the workspace's
# dev-dependencies, so Cargo would resolve other features for the shared crates and build them
# again (about 90 s on a fresh clone on two cores). The test build makes every library, binary,
# cdylib and example the suites need.
ifeq ($(PROFILE),ci)
cargo_build = $(CARGO) test --profile ci --workspace --no-run --quiet
else
cargo_build = $(CARGO) build --profile $(PROFILE) $(1)
endif

.PHONY: all deps build install-build install uninstall deb wheel oracle peers label-peer policies refpolicy demo test lint bench fuzz clean python python-test capi capi-header capi-test capi-bench kernel kernel-test kernel-bench

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	$(CARGO) build --release --workspace

# libsepol's answers, for the differential tests and the benchmark (tools/sepol-oracle).
oracle: deps
	@$(MAKE) -s -C tools/sepol-oracle OUT=$(CURDIR)/target/oracle

# libselinux's own AVC, measured beside seaccess's by `seaccess-lab bench avc`.
peers: deps
	@$(MAKE) -s -C crates/lab/peers/libselinux-avc OUT=$(CURDIR)/target/peers

# libselinux 3.4's own selabel_lookup, which crates/label is compared with (tests/label).
label-peer: deps
	@bash tests/label/build.sh target/label >/dev/null

# The project's own test policies, compiled at every version each supports.
policies: deps
	@bash testdata/policies/compile.sh target/policies

# Debian's reference policy source built monolithic with checkpolicy (standard, mcs, mls),
# cached under target/refpolicy.
refpolicy: deps
	@bash scripts/build-refpolicy.sh $(REFPOLICY)

# libseaccess, the libselinux-compatible C library: target/release/libseaccess.so and .a,
# target/libselinux/libselinux.so.1 (the same library named and versioned as libselinux 3.4's, for
# programs built against libselinux: LD_LIBRARY_PATH=target/libselinux), and seaccess.pc for
# building C programs against the build tree (pkg-config --cflags --libs seaccess).
capi: deps
	$(call cargo_build,-p seaccess-capi)
	@SEACCESS_BUILD=$(BUILD) bash tests/capi/dropin.sh
	@mkdir -p target/pkgconfig
	@sed -e 's|@PREFIX@|$(CURDIR)|' -e 's|@LIBDIR@|$(CURDIR)/$(BUILD)|' -e 's|@VERSION@|$(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)|' \
		crates/capi/seaccess.pc.in > target/pkgconfig/seaccess.pc

# crates/capi/include/seaccess.h from crates/capi/src/load.rs (a test fails when it is stale).
capi-header: deps
	cbindgen --quiet --config crates/capi/cbindgen.toml --output crates/capi/include/seaccess.h crates/capi/src/load.rs

# The C programs in tests/capi against libseaccess: libsepol differential, errors, threads,
# fail-closed loading, callbacks, a broken stderr, fork, permissive and unknown requests, stale
# contexts, checks racing renumbering reloads, AddressSanitizer, valgrind.
capi-test: capi oracle policies
	SEACCESS_BUILD=$(BUILD) bash tests/capi/run.sh

# selinux_check_access and avc_has_perm through libseaccess against libselinux 3.4's own, on the
# same queries (not a timed test: prints the times and ratios).
capi-bench: capi oracle
	bash tests/capi/bench.sh $(DEFAULT_POLICY)

# Debian's stock cloud kernel, unpacked (not installed) into target/kernel for the guest suites,
# and Debian's auditd for the enforcement guest (unpacked, never installed on this machine).
kernel: deps
	@bash scripts/fetch-kernel.sh target/kernel >/dev/null
	@bash scripts/fetch-auditd.sh target/kernel/auditd >/dev/null

# The guest suites (tests/kernel): Debian's kernel under QEMU with SELinux enforcing Debian's
# policy, the same operations answered by crates/objmgr's hooks; one boot per suite, one summary
# line per suite last.
kernel-test: kernel
	$(call cargo_build,-p seaccess-cli -p seaccess-lab -p seaccess-enforce --bin seaccess --example kernel_oracle --example enforce_smoke)
	SEACCESS_BUILD=$(BUILD) SEACCESS_REQUIRE_GUEST=1 bash tests/kernel/run.sh

# The seed experiments in the guest under -icount (tests/kernel/bench): a benchmark, not a test;
# prints the table README carries.
kernel-bench: kernel
	$(call cargo_build,-p seaccess-cli --bin seaccess)
	SEACCESS_BUILD=$(BUILD) bash tests/kernel/bench/run.sh

# Installs seaccess (the commands, libseaccess, its header and seaccess.pc, the private libselinux
# drop-in `seaccess run` uses, man pages, completions, the fstab mount helper and the systemd unit)
# under PREFIX, into DESTDIR if given (scripts/install.sh says where each goes); `make uninstall`
# with the same variables removes it. The installed programs carry no debug information.
PREFIX ?= /usr/local
install-build: deps
	$(call cargo_build,-p seaccess-cli -p seaccess-lab-cli -p seaccess-capi --bins --lib)
	@SEACCESS_BUILD=$(BUILD) bash tests/capi/dropin.sh

install: install-build
	@BUILD=$(BUILD) PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) bash scripts/install.sh install

uninstall:
	@PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) bash scripts/install.sh uninstall

# The Debian packages in target/deb (scripts/deb.sh): seaccess, libseaccess0 and libseaccess-dev;
# `apt install ./target/deb/*.deb` installs them, `apt remove seaccess libseaccess0` removes them.
deb: install-build
	@BUILD=$(BUILD) bash scripts/deb.sh

# The Python bindings as a wheel in target/wheels (maturin), for `pip install` into any venv.
wheel: python
	target/venv/bin/maturin build --quiet --profile $(PROFILE) -m crates/python/Cargo.toml -o target/wheels

demo: build policies
	./target/release/seaccess tour

# The formatting (rustfmt.toml) and the workspace lints (no unwrap/expect/panic in library code,
# no unsafe outside the ABI crates) as errors; and `seaccess`, what a user installs, linking none
# of the lab (its designs, plots and progress bars are seaccess-lab's, crates/lab-cli).
lint: deps
	$(CARGO) fmt --all --check
	cd fuzz && $(CARGO) fmt --check
	@tree=$$($(CARGO) tree -q -p seaccess-cli -e normal --prefix none) || exit 1; \
	if grep -E '^(seaccess-lab|plotters|indicatif) ' <<< "$$tree"; then \
		echo 'lint: seaccess-cli links the lab; it belongs in seaccess-lab-cli'; exit 1; fi
	$(CARGO) clippy --profile ci --workspace --all-targets -- -D warnings

# Every differential test is required here: a missing oracle, Debian policy or reference policy
# build fails the run instead of skipping the comparison.
test: deps oracle peers label-peer policies refpolicy lint
	bash tests/run/host_roots.sh save target/host-roots.before
	SEACCESS_REQUIRE_ORACLE=1 $(CARGO) test --profile ci --workspace
	@# The guest suites (QEMU, one vCPU) run beside the host's suites, which leave a core idle
	@# much of the time; their output and status come at the end (tests/kernel/wait.sh).
	@rm -f target/kernel-test.rc; ( $(MAKE) -s kernel-test PROFILE=ci > target/kernel-test.log 2>&1; \
		echo $$? > target/kernel-test.rc ) &
	SEACCESS_BUILD=target/ci SEACCESS_REQUIRE_ORACLE=1 bash tests/cli.sh
	SEACCESS_BUILD=target/ci SEACCESS_REQUIRE_ORACLE=1 bash tests/label/cli.sh
	SEACCESS_BUILD=target/ci bash tests/tools/run.sh
	SEACCESS_BUILD=target/ci SEACCESS_REQUIRE_FUSE=$$([ -e /dev/fuse ] && echo 1 || echo 0) bash tests/mount/run.sh
	SEACCESS_BUILD=target/ci SEACCESS_REQUIRE_FUSE=$$([ -e /dev/fuse ] && echo 1 || echo 0) bash tests/mount/attacks.sh
	$(MAKE) capi-test PROFILE=ci
	SEACCESS_BUILD=target/ci bash tests/run/labels.sh
	SEACCESS_BUILD=target/ci bash tests/run/session.sh
	@$(MAKE) -s python-test PROFILE=ci
	SEACCESS_BUILD=target/ci bash tests/install/run.sh
	SEACCESS_BUILD=target/ci SEACCESS_README_REQUIRE=1 bash tests/readme.sh
	bash tests/kernel/wait.sh target/kernel-test
	bash tests/run/host_roots.sh compare target/host-roots.before

# The Python bindings, built and installed by pip into target/venv (scripts/python-venv.sh).
python: deps
	@SEACCESS_PROFILE=$(PROFILE) bash scripts/python-venv.sh target/venv

# The bindings' pytest suite, the differential against libsepol included (needs the oracle and
# the compiled test policies; a missing one fails the run).
python-test: python oracle policies capi
	target/venv/bin/python -m pytest -q crates/python/tests

bench: build oracle peers label-peer
	./target/release/seaccess-lab bench engine --policy $(DEFAULT_POLICY)
	./target/release/seaccess-lab bench avc --policy $(DEFAULT_POLICY)
	./target/release/seaccess-lab bench hit-path --policy $(DEFAULT_POLICY)
	./target/release/seaccess-lab bench objmgr --policy $(DEFAULT_POLICY)
	./target/release/seaccess-lab bench label
	./target/release/seaccess-lab bench label --sets
	./target/release/seaccess-lab bench mount --policy $(DEFAULT_POLICY)
	bash tests/tools/bench-explain.sh $(DEFAULT_POLICY)

fuzz:
	bash fuzz/run.sh $(FUZZ_SECONDS)

clean:
	$(CARGO) clean
