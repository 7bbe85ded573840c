#!/bin/sh
# Print the BLAS and LAPACK libraries the program $1 loads in this environment, one line
# each, with the file the dynamic linker resolves them to (links followed):
#   mdxbench-lib: libblas.so.3 /usr/lib/x86_64-linux-gnu/openblas-serial/libblas.so.3
bin=${1:?usage: libinfo.sh PROGRAM}
ldd "$bin" | awk '$2 == "=>" && $1 ~ /blas|lapack|mkl/ {print $1, $3}' |
while read -r lib path; do
    echo "mdxbench-lib: $lib $(readlink -f "$path")"
done
