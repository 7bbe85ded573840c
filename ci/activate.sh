# Source this file (bash or zsh) to use mdxbench from a shell:
#     source ci/activate.sh
# It puts the project's virtual environment first on PATH and sets
#   RFM_CONFIG_FILES   -> site-configs/settings.py (so `reframe` needs no -C)
#   SLURM_CONF         -> the one-node cluster of ci/slurm.sh, if it was generated
#                         and SLURM_CONF is not set already (a real site keeps its own)
#   RFM_REFERENCE_PREFIX -> site-configs/references (reference data files)
#   MDXBENCH_LOCAL_SLURM_CONF -> SLURM_CONF, if set (the Slurm the `local` system uses)
#   MDXBENCH_ROOT, MDXBENCH_STATE_DIR
# Then: reframe -c checks/ -r --system local
_mdx_here=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)
export MDXBENCH_ROOT="$_mdx_here"
export MDXBENCH_STATE_DIR="${MDXBENCH_STATE_DIR:-$_mdx_here/.mdxbench}"
export MDXBENCH_VENV="${MDXBENCH_VENV:-$MDXBENCH_STATE_DIR/venv}"
export RFM_CONFIG_FILES="$_mdx_here/site-configs/settings.py"
# External references ($ref) are looked up here (ReFrame 4.10 reads it from this variable).
export RFM_REFERENCE_PREFIX="${RFM_REFERENCE_PREFIX:-$_mdx_here/site-configs/references}"
if [ -z "${SLURM_CONF:-}" ] && [ -f "$MDXBENCH_STATE_DIR/slurm/etc/slurm.conf" ]; then
    export SLURM_CONF="$MDXBENCH_STATE_DIR/slurm/etc/slurm.conf"
fi
# The `local` system is this machine's Slurm: ci/slurm.sh's, or the one SLURM_CONF names
if [ -n "${SLURM_CONF:-}" ] && [ -z "${MDXBENCH_LOCAL_SLURM_CONF:-}" ]; then
    export MDXBENCH_LOCAL_SLURM_CONF="$SLURM_CONF"
fi
case ":$PATH:" in
    *":$MDXBENCH_VENV/bin:"*) ;;
    *) export PATH="$MDXBENCH_VENV/bin:$PATH" ;;
esac
unset _mdx_here
