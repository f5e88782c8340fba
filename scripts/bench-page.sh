#!/usr/bin/env bash
# The approval page with 100 pending commit proposals on a real gateway, in headless
# chromium: prints how long the page takes to show them. Needs chromium and chromedriver
# (scripts/setup installs them). The browser does the measured work, so the test
# profile's build of gitward is enough.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked --test it gateway_browser::bench_page_render_with_100_pending_cards \
    -- --ignored --nocapture --test-threads=1 2>&1 | grep -oE 'page with .*|panicked.*|FAILED'
