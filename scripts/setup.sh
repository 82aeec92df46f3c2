#!/usr/bin/env bash
# Install what mpiscope needs on Debian 12 / Ubuntu 22.04 / 24.04, build it
# against every MPI found (Open MPI and MPICH), and run a profiled demo.
#   scripts/setup.sh            install + demo
#   scripts/setup.sh --no-demo  install only (used by scripts/test.sh)
#
# System packages come from apt (as root, or through sudo). Python packages go
# into a virtual environment inside the checkout, .venv/, made from the
# system's /usr/bin/python3: the system's site-packages are never written
# (PEP 668), whichever python3 comes first on PATH. Afterwards:
#   source .venv/bin/activate      # then: mpiscope ...
#   .venv/bin/mpiscope ...         # or call it by its path
# A second run skips what is already there: apt packages installed, the same
# pyproject.toml and sources as the last install (a hash in .venv), and keeps
# build/ so that pip only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
venv=$repo/.venv
demo=1
[ "${1:-}" = "--no-demo" ] && demo=0

say() { echo "setup: $*"; }

# --- system packages -------------------------------------------------------
# Debian calls the browser chromium; Ubuntu's apt only has chromium-browser.
browser=chromium
if ! apt-cache show chromium >/dev/null 2>&1; then browser=chromium-browser; fi
apt_pkgs=(
  python3 python3-venv python3-pip python3-dev   # the virtual environment, C extensions
  build-essential cmake gfortran                 # the runtime, benchmarks, mini-apps
  binutils                                       # addr2line: call sites' file:line (symbols/)
  elfutils                                       # eu-stack: a hung test run's stacks (tests/mpitest.py)
  libopenmpi-dev openmpi-bin libmpich-dev mpich  # both MPIs, side by side
  "$browser"                                     # the HTML report's browser tests
  slurm-wlm munge                                # a one-node Slurm for the scaling tests
  openssh-server openssh-client iproute2         # the virtual cluster (scripts/vcluster.sh)
)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  # Root, or sudo, only when something is missing: a user without sudo on a machine
  # that has every package gets the rest of the setup.
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null; then
      say "missing apt packages (${missing[*]}) and not root, no sudo: ask an administrator" \
          "to install them, or see docs/install.md ('Without root')" >&2
      exit 1
    fi
    SUDO="sudo"
  fi
  say "apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# --- the virtual environment ----------------------------------------------
# /usr/bin/python3 by path: another python3 first on PATH (pyenv, conda) is not
# the one apt just equipped with venv and headers.
if ! "$venv/bin/python" -c "import sys; sys.exit(sys.prefix == sys.base_prefix)" 2>/dev/null; then
  say "creating $venv (from /usr/bin/python3)"
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
fi
py=$venv/bin/python
pip=("$py" -m pip --disable-pip-version-check -q)

# What the install depends on: the package's metadata and every file that is
# built or shipped. Same hash as last time: nothing to do.
state=$(cd "$repo" && find pyproject.toml CMakeLists.txt cmake runtime src bench examples \
          tests/programs -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 \
        | sort -z | xargs -0 sha1sum | sha1sum | cut -d' ' -f1)
stamp=$venv/.mpiscope-installed
if [ "$(cat "$stamp" 2>/dev/null)" != "$state" ]; then
  # Ubuntu 22.04's pip (22.0) cannot pass settings to the build backend.
  "$py" -c "import pip, sys; sys.exit(tuple(map(int, pip.__version__.split('.')[:2])) < (23, 1))" \
    || "${pip[@]}" install --upgrade "pip>=23.1"
  "$py" -c "import scikit_build_core" 2>/dev/null || \
    "${pip[@]}" install "scikit-build-core>=0.10"
  # mpi4py (a test extra) built against Open MPI, before pip picks a default mpicc.
  "$py" -c "import mpi4py" 2>/dev/null || \
    MPICC=mpicc.openmpi "${pip[@]}" install "mpi4py>=3.1"
  say "pip install .[test] into $venv (builds the native parts for every MPI found)"
  # --no-build-isolation: the scikit-build-core above; build-dir: kept, so a
  # second install only rebuilds what changed.
  "${pip[@]}" install --no-build-isolation --config-settings=build-dir=build ".[test]"
  echo "$state" > "$stamp"
else
  say "mpiscope in $venv is up to date"
fi

# --- mpi4py's own test suite -------------------------------------------------
# tests/reliability/test_reliability_mpi4py.py and perf/reliability/mpi4py_matrix.py run
# the suite from the sdist of the mpi4py installed above; it is cached in
# build/ (never copied into the tree). --no-binary mpi4py: its sdist, while pip
# may read its metadata with wheels of its build requirements.
mpi4py_version=$("$py" -c "import importlib.metadata as m; print(m.version('mpi4py'))")
suite=$repo/build/mpi4py-tests
if [ ! -f "$suite/mpi4py-$mpi4py_version/test/main.py" ]; then
  say "fetching mpi4py $mpi4py_version's test suite into $suite"
  mkdir -p "$suite"
  "${pip[@]}" download --no-binary mpi4py --no-deps "mpi4py==$mpi4py_version" -d "$suite"
  tar -xzf "$suite/mpi4py-$mpi4py_version.tar.gz" -C "$suite"
fi

# --- mpi4py built against MPICH ---------------------------------------------------
# The venv's mpi4py uses Open MPI; tests/runtime/callsites/ also run mpi4py
# programs on MPICH, with this build first on PYTHONPATH (the same sdist).
# Four minutes of compiling on a 2-core machine, so the build is kept in the user's
# cache, under a key of what it depends on (mpi4py's version, the Python, MPICH's
# compiler line and version), and a fresh clone copies it from there.
mpich_mpi4py=$repo/build/mpi4py-mpich
if command -v mpicc.mpich >/dev/null && ! ls "$mpich_mpi4py"/mpi4py/MPI.*.so >/dev/null 2>&1; then
  key=$( { echo "$mpi4py_version"; "$py" -c "import sys; print(sys.version)"; mpicc.mpich -show;
           mpichversion 2>/dev/null; } | sha1sum | cut -c1-16)
  cached=${XDG_CACHE_HOME:-$HOME/.cache}/mpiscope/mpi4py-mpich-$key
  if ! ls "$cached"/mpi4py/MPI.*.so >/dev/null 2>&1; then
    say "building mpi4py $mpi4py_version against MPICH into $cached"
    rm -rf "$cached.part" && mkdir -p "$(dirname "$cached")"
    MPICC=mpicc.mpich "${pip[@]}" install --no-deps --no-binary mpi4py --target "$cached.part" \
      "$suite/mpi4py-$mpi4py_version.tar.gz"
    rm -rf "$cached" && mv "$cached.part" "$cached"
  fi
  say "mpi4py $mpi4py_version for MPICH: $mpich_mpi4py (from $cached)"
  rm -rf "$mpich_mpi4py" && mkdir -p "$repo/build" && cp -a "$cached" "$mpich_mpi4py"
fi

say "done: $("$venv/bin/mpiscope" --version) in $venv"
say "use it with: source .venv/bin/activate   (or run .venv/bin/mpiscope)"
if [ $demo = 1 ]; then
  PATH=$venv/bin:$PATH scripts/demo.sh
fi
