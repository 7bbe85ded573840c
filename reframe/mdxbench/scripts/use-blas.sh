# Source in a job script: the programs this job starts resolve libblas.so.3 and
# liblapack.so.3 to the library $1 (e.g. Intel MKL's libmkl_rt.so), through a directory of
# this job's own placed first on LD_LIBRARY_PATH. The machine's BLAS alternative stays as
# it is for everything else. A missing library is an error, never a silent fallback.
mdxbench_blas_lib=${1:?usage: . use-blas.sh /path/to/libBLAS.so}
if [ ! -r "$mdxbench_blas_lib" ]; then
    echo "mdxbench: BLAS library $mdxbench_blas_lib not found on $(hostname)" >&2
    exit 1
fi
mdxbench_blas_dir="$PWD/blas-$(basename "$mdxbench_blas_lib" .so)"
mkdir -p "$mdxbench_blas_dir" || exit 1
ln -sf "$mdxbench_blas_lib" "$mdxbench_blas_dir/libblas.so.3"
ln -sf "$mdxbench_blas_lib" "$mdxbench_blas_dir/liblapack.so.3"
# the library's own directory next: a library that loads companions beside itself (oneAPI
# MKL's libmkl_rt loads libmkl_core, libmkl_sequential, ...) finds them there
mdxbench_blas_real=$(dirname "$(readlink -f "$mdxbench_blas_lib")")
export LD_LIBRARY_PATH="$mdxbench_blas_dir:$mdxbench_blas_real${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
