# libs3, the C library of IOR's S3-libs3 backend (the mdx I paper's Fig. 7: IOR against the
# S3 object store). Spack's builtin repository has no libs3, and the only release tarball
# (2.0, Debian's) predates the API IOR 4.0 calls (security token, authRegion, timeoutMs):
# this package builds bji/libs3 at the commit the paper's build took (its master as of
# 2022-02-18).
from spack_repo.builtin.build_systems.makefile import MakefilePackage

from spack.package import *


class Libs3(MakefilePackage):
    """libs3: a C library and command-line tool for Amazon S3 and S3-compatible object
    stores (AWS signature version 4)."""

    homepage = "https://github.com/bji/libs3"

    license("LGPL-3.0-or-later OR GPL-2.0-or-later")

    # bji/libs3 at commit 287e4bee6f (2019-04-09, the last commit before 2022-02-18),
    # archived as libs3-287e4bee/ (tar, gzip -n). Not an upstream archive: no server offers
    # it, so Spack finds it only in a source mirror, by this package's name and version
    # (libs3/libs3-287e4bee.tar.gz), checksum verified; the URL below says so by failing
    # where no mirror has it.
    version(
        "287e4bee",
        sha256="14fd0b799fe163bad82f1de954e5143abdc46b7788727bdd23f8e7564a1791f4",
        url="file:///only-in-a-source-mirror/libs3-287e4bee.tar.gz",
    )

    depends_on("c", type="build")
    depends_on("curl")          # its GNUmakefile asks curl-config and xml2-config
    depends_on("libxml2")
    depends_on("openssl")

    def edit(self, spec, prefix):
        # -Werror: OpenSSL 3 deprecates the MD5/HMAC calls libs3 makes, and the warnings
        # would stop the build
        filter_file(r"-Werror\b", "", "GNUmakefile")

    def build(self, spec, prefix):
        make("exported")

    def install(self, spec, prefix):
        make("install", f"DESTDIR={prefix}")
