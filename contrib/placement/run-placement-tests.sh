#!/bin/bash
# Run Placement's own allocation-candidate tests against
# openstack-placement 16.0.0 with root-required-prefilter.patch applied.
#
#   contrib/placement/run-placement-tests.sh [--no-patch] [--venv DIR]
#       [--sdist-tests]
#
# It builds a virtualenv (a temporary one, removed at the end, unless
# --venv names one to create or reuse), installs openstack-placement==16.0.0
# and what Placement's functional tests need, puts the package back to its
# released state, applies the patch with "patch -p1" in site-packages (not
# with --no-patch: the control run), and runs with stestr:
#   placement.tests.functional.db.test_allocation_candidates
#   placement.tests.functional.test_api (all the gabbits)
# If the wheel ships no placement/tests (or with --sdist-tests), the tests
# are taken from the sdist on PyPI instead.
# It exits non-zero, with one line on stderr, if anything fails.

set -eu
set -o pipefail

PLACEMENT_VERSION=16.0.0
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PATCH_FILE=$HERE/root-required-prefilter.patch
PYTHON=${PYTHON:-python3}
TESTS='placement\.tests\.functional\.(db\.test_allocation_candidates|test_api)\.'
APPLY_PATCH=1
SDIST_TESTS=0
VENV=
TMP=

die() {
    echo "run-placement-tests: error: $*" >&2
    exit 1
}

cleanup() {
    if [ -n "$TMP" ]; then
        rm -rf "$TMP"
    fi
}
trap cleanup EXIT
trap 'die "failed at line $LINENO: $BASH_COMMAND"' ERR

while [ $# -gt 0 ]; do
    case $1 in
        --no-patch) APPLY_PATCH=0 ;;
        --sdist-tests) SDIST_TESTS=1 ;;
        --venv)
            [ $# -ge 2 ] || die "--venv needs a directory"
            VENV=$2
            shift
            ;;
        -h|--help)
            sed -n '2,17p' "$0"
            exit 0
            ;;
        *) die "unknown argument: $1 (see --help)" ;;
    esac
    shift
done

command -v patch >/dev/null || die "patch(1) is not installed"
if [ "$APPLY_PATCH" = 1 ] && [ ! -f "$PATCH_FILE" ]; then
    die "no patch at $PATCH_FILE"
fi

TMP=$(mktemp -d)
if [ -z "$VENV" ]; then
    VENV=$TMP/venv
fi

START=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then
    echo "== creating virtualenv $VENV"
    "$PYTHON" -m venv "$VENV"
fi
PIP_LOG=$TMP/pip.log
pip_install() {
    if ! "$VENV/bin/python" -m pip install "$@" >> "$PIP_LOG" 2>&1; then
        grep -v 'WARNING: Location' "$PIP_LOG" | tail -n 20 >&2
        die "pip install $* failed"
    fi
}

echo "== installing openstack-placement==$PLACEMENT_VERSION and test deps"
# What placement's test-requirements.txt lists for the functional tests
# (no database drivers: the tests use SQLite in memory).
pip_install "openstack-placement==$PLACEMENT_VERSION" \
    'fixtures>=3.0.0' 'oslotest>=3.5.0' 'stestr>=1.0.0' 'testtools>=2.2.0' \
    'gabbi>=1.35.0' 'wsgi-intercept>=1.7.0' 'cryptography>=2.7'
# Back to the released files, whatever an earlier run patched: reinstall
# the wheel and drop the files the patch may have added, and the tests an
# earlier run took from the sdist.
SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if [ -f "$VENV/placement-patched.files" ]; then
    while read -r added; do
        rm -f "$SITE/$added"
    done < "$VENV/placement-patched.files"
    rm -f "$VENV/placement-patched.files"
fi
if [ -f "$VENV/placement-tests-from-sdist" ]; then
    rm -rf "$SITE/placement/tests" "$VENV/placement-tests-from-sdist"
fi
pip_install --force-reinstall --no-deps \
    "openstack-placement==$PLACEMENT_VERSION"

if [ ! -f "$SITE/placement/tests/functional/test_api.py" ]; then
    SDIST_TESTS=1
fi
if [ "$SDIST_TESTS" = 1 ]; then
    echo "== taking placement/tests from the sdist"
    if ! "$VENV/bin/python" -m pip download --no-binary :all: --no-deps \
            -d "$TMP/sdist" "openstack-placement==$PLACEMENT_VERSION" \
            >> "$PIP_LOG" 2>&1; then
        die "could not download the openstack-placement sdist"
    fi
    tar -xzf "$TMP"/sdist/openstack*placement-"$PLACEMENT_VERSION".tar.gz \
        -C "$TMP/sdist"
    SDIST_TREE=$(echo "$TMP"/sdist/openstack*placement-"$PLACEMENT_VERSION")
    rm -rf "$SITE/placement/tests"
    cp -r "$SDIST_TREE/placement/tests" "$SITE/placement/tests"
    touch "$VENV/placement-tests-from-sdist"
fi

if [ "$APPLY_PATCH" = 1 ]; then
    echo "== applying $(basename "$PATCH_FILE") with patch -p1 in site-packages"
    # Files the patch creates, so that a later run can remove them.
    sed -n 's,^+++ b/\([^[:space:]]*\).*,\1,p' "$PATCH_FILE" |
        while read -r path; do
            [ -e "$SITE/$path" ] || echo "$path"
        done > "$VENV/placement-patched.files"
    patch -p1 --forward --batch -d "$SITE" < "$PATCH_FILE"
    MODE=patched
else
    MODE=stock
fi

echo "== running Placement's tests against the $MODE code"
mkdir -p "$TMP/run"
cd "$TMP/run"
"$VENV/bin/stestr" --test-path "$SITE/placement/tests/functional" \
    --top-dir "$SITE" init >/dev/null
if ! "$VENV/bin/stestr" --test-path "$SITE/placement/tests/functional" \
        --top-dir "$SITE" run "$TESTS" > "$TMP/stestr.out" 2>&1; then
    tail -n 60 "$TMP/stestr.out" >&2
    die "Placement's tests failed against the $MODE code"
fi
grep -E '^ - (Passed|Failed|Skipped|Expected Fail|Unexpected Success):' \
    "$TMP/stestr.out" || true
TOTAL=$("$VENV/bin/stestr" --test-path "$SITE/placement/tests/functional" \
    --top-dir "$SITE" last --subunit | "$VENV/bin/subunit-ls" | wc -l)
echo "== $MODE: $TOTAL tests ran, all passed, in $(($(date +%s) - START)) s"
