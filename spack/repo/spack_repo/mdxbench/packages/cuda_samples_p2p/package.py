# NVIDIA's p2pBandwidthLatencyTest, the GPU peer-to-peer tool of the mdx I paper (sec. 5.2).
# It is a sample of NVIDIA/cuda-samples, which has no Spack package and no release archive
# of the sample alone: this package builds it from a tree cut out of cuda-samples -- only
# the sample's directory, the Common/ headers it includes and the licence -- and names the
# version for what it is.
import os

from spack_repo.builtin.build_systems.cuda import CudaPackage
from spack_repo.builtin.build_systems.generic import Package

from spack.package import *


class CudaSamplesP2p(Package, CudaPackage):
    """p2pBandwidthLatencyTest of NVIDIA's CUDA samples: GPU-GPU bandwidth and latency with
    peer-to-peer access disabled and enabled."""

    homepage = "https://github.com/NVIDIA/cuda-samples"

    license("BSD-3-Clause")

    # NVIDIA/cuda-samples at commit c94ff366 (after v13.0), cut to
    #   Samples/5_Domain_Specific/p2pBandwidthLatencyTest/, Common/, LICENSE
    # and archived as cuda-samples-p2p-c94ff366/ (tar, gzip -n). Not an upstream archive:
    # no server offers it, so Spack finds it only in a source mirror, by this package's
    # name and version (cuda-samples-p2p/cuda-samples-p2p-c94ff366.tar.gz), checksum
    # verified; the URL below says so by failing where no mirror has it. docs/spack.md
    # says how a site makes the same tree from the commit.
    version(
        "c94ff366",
        sha256="ebe6e953490f62c11d74212019d2242ef9bece3b56963c04c5aa31d825a7722f",
        url="file:///only-in-a-source-mirror/cuda-samples-p2p-c94ff366.tar.gz",
    )

    depends_on("cxx", type="build")
    requires("+cuda", msg="the sample is CUDA code")
    conflicts("cuda_arch=none", when="+cuda", msg="name the GPUs' architecture: cuda_arch=")

    SAMPLE = os.path.join("Samples", "5_Domain_Specific", "p2pBandwidthLatencyTest")

    def install(self, spec, prefix):
        nvcc = Executable(spec["cuda"].prefix.bin.nvcc)
        # each architecture's code and its PTX: a GPU newer than every cuda_arch named
        # runs the PTX through the driver's JIT instead of failing with "no kernel image"
        archs = [f"-gencode=arch=compute_{a},code=[sm_{a},compute_{a}]"
                 for a in spec.variants["cuda_arch"].value]
        # the host compiler named (Spack's wrapper of the spec's C++ compiler): nvcc's own
        # lookup of a `gcc` on PATH finds none it can run in Spack's build environment
        nvcc("-O3", "-ccbin", spack_cxx, *archs, "-I", "Common", "-o", "p2pBandwidthLatencyTest",
             join_path(self.SAMPLE, "p2pBandwidthLatencyTest.cu"))
        mkdirp(prefix.bin)
        install("p2pBandwidthLatencyTest", prefix.bin)
