# IOR with its S3-libs3 backend (variant s3): the mdx I paper ran IOR against the S3
# object store (Fig. 7, `-a S3-libS3`); Spack's builtin IOR builds POSIX, MPI-IO, HDF5 and
# NCMPI only. Everything else is the builtin package.
from spack_repo.builtin.packages.ior.package import Ior as BuiltinIor

from spack.package import *


class Ior(BuiltinIor):
    """IOR, with the S3-libs3 backend as a variant."""

    variant("s3", default=False, description="the S3-libs3 backend (IOR 4's -a S3-libs3)",
            when="@4:")
    depends_on("libs3", when="+s3")

    def configure_args(self):
        args = super().configure_args()
        if self.spec.satisfies("@4:"):
            args.append("--with-S3-libs3" if self.spec.satisfies("+s3") else "--without-S3-libs3")
        return args
