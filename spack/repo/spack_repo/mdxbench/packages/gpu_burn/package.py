# gpu-burn (wilicc/gpu-burn), the burn-in of the GpuBurn check. The builtin package knows the
# author's 1.0/1.1 tarballs; the repository has no tags and its CUDA 13 support came later:
# this version is the last upstream commit before its Windows port (a113ce7, 2026-05-27),
# archived as gpu-burn-a113ce7/ (git archive, gzip -n). Not an upstream archive: no server
# offers it, so Spack finds it only in a source mirror, checksum verified; the URL says so
# by failing where no mirror has it (docs/spack.md: how a site makes the same archive).
# Built as its Makefile does, but for every cuda_arch named (code and PTX of each, in the
# fatbin the burn loads at run time) and with that fatbin's installed path as its default
# (-c still wins): its own default is compare.fatbin in the working directory.
from spack_repo.builtin.build_systems.cuda import CudaPackage
from spack_repo.builtin.build_systems.generic import Package

from spack.package import *


class GpuBurn(Package, CudaPackage):
    """Multi-GPU CUDA stress test: GEMM on every GPU, every result compared GPU-side."""

    homepage = "https://github.com/wilicc/gpu-burn"

    license("BSD-2-Clause")

    version(
        "a113ce7",
        sha256="e8faa0bf6942d8121cc52147ebba97e15d9b961633c82eaf52897e415a3fd71a",
        url="file:///only-in-a-source-mirror/gpu-burn-a113ce7.tar.gz",
    )

    depends_on("cxx", type="build")
    requires("+cuda", msg="gpu-burn is CUDA code")
    conflicts("cuda_arch=none", when="+cuda", msg="name the GPUs' architecture: cuda_arch=")

    def install(self, spec, prefix):
        cuda = spec["cuda"].prefix
        fatbin = join_path(prefix.share, "gpu-burn", "compare.fatbin")
        filter_file('#define COMPARE_KERNEL "compare.fatbin"',
                    f'#define COMPARE_KERNEL "{fatbin}"', "gpu_burn-drv.cpp", string=True)
        nvcc = Executable(join_path(cuda.bin, "nvcc"))
        archs = [f"-gencode=arch=compute_{a},code=[sm_{a},compute_{a}]"
                 for a in spec.variants["cuda_arch"].value]
        nvcc("-ccbin", spack_cxx, *archs, "-fatbin", "compare.cu", "-o", "compare.fatbin")
        cxx = Executable(spack_cxx)
        cxx("-O3", "-Wno-unused-result", f"-I{cuda.include}", "-std=c++11", "-DIS_JETSON=false",
            "-c", "gpu_burn-drv.cpp")
        # the driver's libcuda from the toolkit's link stubs where the build host has no
        # driver (the node's at run time), cuBLAS and the runtime from the toolkit
        cxx("-o", "gpu_burn", "gpu_burn-drv.o", "-O3", f"-L{cuda.lib64}",
            f"-L{join_path(cuda.lib64, 'stubs')}", f"-Wl,-rpath,{cuda.lib64}",
            "-lcuda", "-lcublas", "-lcudart")
        mkdirp(prefix.bin, join_path(prefix.share, "gpu-burn"))
        install("gpu_burn", prefix.bin)
        install("compare.fatbin", fatbin)
