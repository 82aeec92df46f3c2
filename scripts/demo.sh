#!/usr/bin/env bash
# A profiled demo: the stencil mini-app on 4 ranks with one overloaded rank.
set -euo pipefail
echo "demo: not yet available"
