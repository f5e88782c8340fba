# Shared by the gateway benchmarks (sourced, never run): release binaries, a scratch home
# with the 20,000-file synthetic repository, and a real `gitward gateway` on loopback.
#
#   rig_binaries     sets $bin and $bench (GITWARD_BIN / MCP_BENCH_BIN override them)
#   rig_repo         sets $work and $repo; removes both (and stops the gateway) on exit
#   rig_gateway      starts the gateway over $work and exports FLUXGIT_MCP_HANDSHAKE_ADDR

rig_binaries() {
    bin=${GITWARD_BIN:-}
    if [ -z "$bin" ]; then
        cargo build --quiet --release
        bin="${CARGO_TARGET_DIR:-target}/release/gitward"
    fi
    bench=${MCP_BENCH_BIN:-}
    if [ -z "$bench" ]; then
        cargo build --quiet --release --example mcp_bench
        bench="${CARGO_TARGET_DIR:-target}/release/examples/mcp_bench"
    fi
}

rig_cleanup() {
    if [ -n "${gateway_pid:-}" ]; then kill "$gateway_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}

rig_repo() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/gitward-bench.XXXXXX")
    gateway_pid=""
    trap rig_cleanup EXIT
    export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/gitconfig" FLUXGIT_RUN_DIR="$work/run"
    printf '[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n' >"$GIT_CONFIG_GLOBAL"
    scripts/gen-bench-repo "$work/repo" >/dev/null
    repo="$work/repo"
}

# Every call is a new pending proposal: the per-agent cap is lifted out of the way.
rig_gateway() {
    mkfifo "$work/started"
    "$bin" gateway --addr 127.0.0.1:0 --ui-addr 127.0.0.1:0 --allowed-root "$work" \
        --max-pending-per-agent 1000000 >"$work/started" 2>"$work/gateway.err" &
    gateway_pid=$!
    local line
    read -r line <"$work/started"
    handshake=$(printf '%s' "$line" | sed -E 's/.*"handshake":"([^"]+)".*/\1/')
    export FLUXGIT_MCP_HANDSHAKE_ADDR="$handshake"
}
