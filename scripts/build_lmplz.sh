#!/usr/bin/env bash
# Build KenLM's lmplz (the reference n-gram estimator) into .venv/bin, from the kenlm sdist on
# PyPI with cmake and Debian's boost/zlib/bz2/lzma development packages.
#
# Optional: contstim trains n-gram models with its own modified Kneser-Ney estimator when lmplz
# is absent; with lmplz on PATH, `contstim train ngram --backend auto` uses it and the tests
# compare the two. Installs the Debian packages when run as root; exits 0 without lmplz when it
# cannot build (say why), so callers never fail on it.
#
# A build is kept in the user's cache ($XDG_CACHE_HOME or ~/.cache, contstim_bench/lmplz/
# kenlm-<version>/), so another checkout on the same machine copies it (a second) instead of
# downloading and compiling again (minutes); CONTSTIM_LMPLZ_REBUILD=1 builds anyway.
set -uo pipefail
cd "$(dirname "$0")/.."
KENLM_VERSION=0.3.0  # the kenlm sdist lmplz is built from
[ -x .venv/bin/lmplz ] && { echo "[lmplz] already built: .venv/bin/lmplz" >&2; exit 0; }
cached="${XDG_CACHE_HOME:-$HOME/.cache}/contstim_bench/lmplz/kenlm-$KENLM_VERSION/lmplz"
usage=$([ -x "$cached" ] && "$cached" --help 2>&1 || true)  # lmplz's usage names its estimator
if [ -z "${CONTSTIM_LMPLZ_REBUILD:-}" ] && grep -qi "kneser" <<< "$usage"; then
  cp "$cached" .venv/bin/lmplz && echo "[lmplz] copied lmplz built earlier on this machine ($cached)" >&2
  exit 0
fi
PKGS="cmake g++ make libboost-program-options-dev libboost-system-dev libboost-thread-dev libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev"
missing=$(for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "[lmplz] installing Debian packages:" $missing >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null) \
      || { echo "[lmplz] apt-get failed: not building lmplz" >&2; exit 0; }
  else
    echo "[lmplz] missing packages ($missing) and not root: not building lmplz" >&2; exit 0
  fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! .venv/bin/python -m pip download -q --no-deps --no-binary kenlm -d "$work" "kenlm==$KENLM_VERSION" \
     2> >(grep -v "is ignored" >&2); then
  echo "[lmplz] could not download the kenlm sdist: not building lmplz" >&2; exit 0
fi
tar -xzf "$work"/kenlm-*.tar.gz -C "$work" && src=$(ls -d "$work"/kenlm-*/ | head -1)
echo "[lmplz] building lmplz from $(basename "$src") (a few minutes, once per machine)" >&2
if (mkdir -p "$src/build" && cd "$src/build" && cmake .. -DCMAKE_BUILD_TYPE=Release >/dev/null \
    && make -j"$(nproc)" lmplz >/dev/null 2>&1); then
  cp "$src/build/bin/lmplz" .venv/bin/lmplz && echo "[lmplz] built .venv/bin/lmplz" >&2
  mkdir -p "$(dirname "$cached")" && cp "$src/build/bin/lmplz" "$cached.part-$$" && mv "$cached.part-$$" "$cached" || true
else
  echo "[lmplz] build failed: contstim will use its own Kneser-Ney estimator" >&2
fi
exit 0
