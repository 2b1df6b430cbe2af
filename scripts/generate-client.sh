#!/usr/bin/env bash
# Regenerates the committed Swift client of openapi.yaml (R-S7) with swift-openapi-generator:
# Tests/CartographClientTests/Generated/{Types,Client}.swift, from openapi-generator-config.yaml there.
# Run it after changing openapi.yaml and commit the result; CI never runs the generator (it takes
# minutes to build) and only compiles the generated code.
#
# Usage: scripts/generate-client.sh
#   SWIFT_OPENAPI_GENERATOR=/path/to/swift-openapi-generator  use this binary instead of building one
#   OAG_DIR=/tmp/oag  where the generator is cloned and built (outside the repository; kept for reuse)
set -euo pipefail
version=1.14.3   # keep in step with the swift-openapi-runtime the test target depends on
repo=$(cd "$(dirname "$0")/.." && pwd)
out="$repo/Tests/CartographClientTests/Generated"
generator=${SWIFT_OPENAPI_GENERATOR:-}

if [ -z "$generator" ]; then
  dir=${OAG_DIR:-/tmp/oag}
  case "$dir/" in "$repo"/*) echo "OAG_DIR must be outside the repository" >&2; exit 1 ;; esac
  if [ ! -d "$dir/src" ]; then
    git clone --quiet https://github.com/apple/swift-openapi-generator "$dir/src"
  fi
  git -C "$dir/src" -c advice.detachedHead=false checkout --quiet "$version"
  swift build --package-path "$dir/src" -c release --product swift-openapi-generator
  generator="$(swift build --package-path "$dir/src" -c release --show-bin-path)/swift-openapi-generator"
fi

"$generator" generate \
  --config "$out/openapi-generator-config.yaml" \
  --output-directory "$out" \
  "$repo/openapi.yaml"
echo "Generated $(cd "$repo" && ls Tests/CartographClientTests/Generated/*.swift | tr '\n' ' ')"
