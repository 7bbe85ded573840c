# NVIDIA nccl-tests as the builtin package builds it (2.17.6's archive, checksum verified),
# for what the NcclTests check runs:
#   - `collectives`: the programs built (the suite has ten, each compiled with the common
#     code and the data check for every architecture: the environments name the three the
#     check runs);
#   - each architecture's code and its PTX (the builtin's gencode flags give code alone: a
#     GPU newer than every cuda_arch named would find no kernel it can run);
#   - the programs alone in bin/ (the builtin installs the whole build tree there: objects
#     and the data check's directory);
#   - with MPI, nvcc's host compiler is the MPI's C++ wrapper: the builtin's MPI_HOME
#     alone assumes <prefix>/include, where Debian's Open MPI (prefix /usr) has no mpi.h
#     (it is under /usr/lib/x86_64-linux-gnu/openmpi/include).
from spack_repo.builtin.packages.nccl_tests.package import NcclTests as BuiltinNcclTests

from spack.package import *

PROGRAMS = ("all_reduce", "all_gather", "broadcast", "reduce_scatter", "reduce", "alltoall",
            "scatter", "gather", "sendrecv", "hypercube")


class NcclTests(BuiltinNcclTests):
    variant("collectives", default="all", values=("all",) + PROGRAMS, multi=True,
            description="the programs built (<name>_perf)")
    conflicts("cuda_arch=none", when="+cuda", msg="name the GPUs' architecture: cuda_arch=")

    @property
    def build_targets(self):
        targets = list(super().build_targets)
        if self.spec.satisfies("+mpi"):
            # the MPI's C++ wrapper as nvcc's host compiler (-ccbin $(CXX)): it knows where
            # its headers and libraries are, wherever the MPI put them
            targets.append(f"CXX={self.spec['mpi'].mpicxx}")
        chosen = self.spec.variants["collectives"].value
        if "all" not in chosen:
            targets.append("BIN_FILES_LIST={0}".format(" ".join(sorted(chosen))))
        return targets

    def setup_build_environment(self, env):
        archs = self.spec.variants["cuda_arch"].value
        env.set("NVCC_GENCODE", " ".join(
            f"-gencode=arch=compute_{a},code=[sm_{a},compute_{a}]" for a in archs))

    def install(self, spec, prefix):
        mkdirp(prefix.bin)
        for program in find("build", "*_perf", recursive=False):
            install(program, prefix.bin)
