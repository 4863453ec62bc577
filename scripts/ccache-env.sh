# Sourced by the build scripts: lets a fresh clone (CI, a second checkout) reuse this machine's
# ccache. Paths under the clone are hashed relative to it (base_dir, no hashing of the build
# folder), and the precompiled headers CMake makes are cacheable only with this sloppiness.
repository_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CCACHE_BASEDIR="$repository_root"
export CCACHE_NOHASHDIR=1
export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
