#!/usr/bin/env bash
# Runs every test: unit, property, conformance and database integration tests.
# Integration tests talk to PostgreSQL on 127.0.0.1:5432 and MariaDB on
# 127.0.0.1:3306; with CI=true they fail when a server is down, otherwise they
# skip with a message.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --all-targets "$@"
