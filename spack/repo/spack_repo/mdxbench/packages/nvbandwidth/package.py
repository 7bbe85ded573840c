# NVIDIA nvbandwidth as the builtin package builds it, for the GPUs the spec names, on a
# build host with or without the GPU driver:
#   - the builtin passes no CMAKE_CUDA_ARCHITECTURES, so nvbandwidth's CMakeLists detects
#     the architecture of a GPU on the build host -- none on a build host or in CI, where
#     it falls back to nvcc's default and the JIT -- and cuda_arch is ignored. Here
#     cuda_arch is what is built (CMake's "80": sm_80 code and compute_80 PTX);
#   - nvbandwidth links the driver's libraries by name (cuda, nvidia-ml): where the build
#     host has no driver they come from the toolkit's link stubs (lib64/stubs), as
#     NVIDIA's toolkit ships them; at run time the node's driver provides them.
from spack_repo.builtin.packages.nvbandwidth.package import Nvbandwidth as BuiltinNvbandwidth

from spack.package import *


class Nvbandwidth(BuiltinNvbandwidth):
    conflicts("cuda_arch=none", when="+cuda", msg="name the GPUs' architecture: cuda_arch=")

    def cmake_args(self):
        stubs = join_path(self.spec["cuda"].prefix, "lib64", "stubs")
        return [self.define_cuda_architectures(self),
                self.define("CMAKE_EXE_LINKER_FLAGS", f"-L{stubs}")]
