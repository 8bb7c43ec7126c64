#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for SECONDS each (default 60) and prints, per
# target, the executions and whether libFuzzer found a crash (kept in fuzz/artifacts/).
# Needs `cargo install cargo-fuzz`; runs on stable through RUSTC_BOOTSTRAP=1 (the
# sanitizer flags are nightly-only). Not part of CI or `cargo test`.
set -euo pipefail
seconds="${1:-60}"
cd "$(dirname "$0")/../fuzz"
export RUSTC_BOOTSTRAP=1 CARGO_INCREMENTAL=0
status=0
for target in $(cargo fuzz list); do
    log="$(mktemp)"
    # -rss_limit_mb guards memory; -max_len keeps inputs in the range of real queries.
    if cargo fuzz run "$target" -- -max_total_time="$seconds" -max_len=20000 \
        -rss_limit_mb=2048 >"$log" 2>&1; then
        result="no findings"
    else
        result="FINDING (see fuzz/artifacts/$target)"
        status=1
    fi
    runs="$(grep -o 'Done [0-9]* runs' "$log" | tail -1 || true)"
    echo "$target: ${runs:-no summary} — $result"
    [ "$status" -eq 0 ] || tail -30 "$log"
    rm -f "$log"
done
exit "$status"
