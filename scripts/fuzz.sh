#!/usr/bin/env bash
# Builds one libFuzzer target and runs it (docs/fuzzing.md).
#
#   scripts/fuzz.sh <target> [seconds] [libFuzzer flags...]   fuzz for `seconds` (default 60)
#   scripts/fuzz.sh <target> replay [files or dirs...]         run the checked-in corpus (or the
#                                                               given inputs) once, instrumented
#   scripts/fuzz.sh <target> build                              build only
#
# Targets: json model coredata mapping predicate. The modules under test (CartographCore,
# CartographPredicate, CartographMapping) and the properties (CartographFuzzing) are compiled with
# swiftc -sanitize=fuzzer,address into .build-fuzz/, apart from SwiftPM's build, so `swift build`
# never sees a sanitizer. New corpus entries go to .build-fuzz/corpus/<target> (not checked in),
# crashes and timeouts to .build-fuzz/artifacts/<target>/. The checked-in seeds (Fuzz/Corpus/<target>)
# and crashers (Fuzz/Regressions/<target>) are read, never written.
set -euo pipefail
# The Swift runtime's backtracer and ASan both handle crashes; libFuzzer needs ASan's report.
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no}
# Leak checking is off (also at exit): the Swift runtime's caches and FoundationXML's error strings
# read as leaks, and leaks are not what these targets look for.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
cd "$(dirname "$0")/.."

TARGETS="json model coredata mapping predicate"
MODULES="CartographCore CartographPredicate CartographMapping CartographFuzzing"
OUT=.build-fuzz
SWIFTC=${SWIFTC:-swiftc}
SANITIZE=-sanitize=fuzzer,address
FEATURES=(-enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility
          -enable-upcoming-feature InternalImportsByDefault)

usage() { echo "usage: $0 <$(echo $TARGETS | tr ' ' '|')> [seconds|replay|build] [args...]" >&2; exit 2; }
target=${1:-}
[[ " $TARGETS " == *" $target "* && -n "$target" ]] || usage
mode=${2:-60}
shift $(( $# < 2 ? $# : 2 ))

# The longest input libFuzzer makes, per target: room for a realistic document, small enough to stay fast.
case $target in
    coredata) max_len=16384 ;;
    predicate) max_len=1024 ;;
    *) max_len=8192 ;;
esac

# Rebuilds the modules when a source file is newer than the last build (the modules depend on
# each other in order, so all four are rebuilt together).
build_modules() {
    mkdir -p "$OUT/modules" "$OUT/objects" "$OUT/bin"
    local stamp="$OUT/modules/.stamp"
    if [[ -f "$stamp" ]] && [[ -z "$(find $(printf 'Sources/%s ' $MODULES) -name '*.swift' -newer "$stamp" | head -1)" ]]; then
        return
    fi
    # Stamped before compiling, so that a file saved during the build is seen next time.
    touch "$stamp.new"
    for module in $MODULES; do
        echo "fuzz: compiling $module (-O, $SANITIZE)" >&2
        # shellcheck disable=SC2046
        "$SWIFTC" -module-name "$module" -parse-as-library -swift-version 6 -wmo -O -g $SANITIZE "${FEATURES[@]}" \
            -I "$OUT/modules" -emit-module -emit-module-path "$OUT/modules/$module.swiftmodule" \
            -c -o "$OUT/objects/$module.o" $(find "Sources/$module" -name '*.swift' | sort)
    done
    mv "$stamp.new" "$stamp"
}

build_target() {
    local binary="$OUT/bin/fuzz-$target" entry="Fuzz/Targets/$target.swift"
    if [[ ! -x "$binary" || "$entry" -nt "$binary" || "$OUT/modules/.stamp" -nt "$binary" ]]; then
        echo "fuzz: linking $binary" >&2
        "$SWIFTC" -module-name "Fuzz_$target" -use-ld=lld -parse-as-library -swift-version 6 -O -g $SANITIZE "${FEATURES[@]}" \
            -I "$OUT/modules" "$entry" $(printf "$OUT/objects/%s.o " $MODULES) -o "$binary"
    fi
}

build_modules
build_target
binary="$OUT/bin/fuzz-$target"
corpus="$OUT/corpus/$target"
artifacts="$OUT/artifacts/$target"
mkdir -p "$corpus" "$artifacts"
seeds=()
for dir in "Fuzz/Corpus/$target" "Fuzz/Regressions/$target"; do [[ -d "$dir" ]] && seeds+=("$dir"); done
common=(-detect_leaks=0 -rss_limit_mb=2048 -timeout="${FUZZ_TIMEOUT:-10}" -max_len=$max_len)
[[ -f "Fuzz/Dictionaries/$target.dict" ]] && common+=(-dict="Fuzz/Dictionaries/$target.dict")

case $mode in
    build)
        echo "$binary"
        ;;
    replay)
        inputs=("$@")
        [[ ${#inputs[@]} -gt 0 ]] || inputs=("${seeds[@]}")
        exec "$binary" "${common[@]}" -runs=0 "${inputs[@]}"
        ;;
    *[!0-9]*|'')
        usage
        ;;
    *)
        echo "fuzz: $target for $mode s; corpus $corpus, artifacts $artifacts/" >&2
        exec "$binary" "${common[@]}" -max_total_time="$mode" -print_final_stats=1 \
            -artifact_prefix="$artifacts/" "$@" "$corpus" "${seeds[@]}"
        ;;
esac
