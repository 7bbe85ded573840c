# The OSU micro-benchmarks 7.4 (our choice: the papers name no OSU version), from a public
# tree of OMB 7.4 instead of the official tarball (which no public repository keeps, so no
# archive here can carry the builtin osu-micro-benchmarks@7.4 checksum, and Spack rightly
# refuses it under that name).
from spack_repo.builtin.packages.osu_micro_benchmarks.package import (
    OsuMicroBenchmarks as BuiltinOsuMicroBenchmarks,
)

from spack.package import *


class OsuMicroBenchmarks(BuiltinOsuMicroBenchmarks):
    """OSU micro-benchmarks, with 7.4-tree: OMB 7.4 from a public source tree."""

    # johnpzh/osu-micro-benchmarks-7.4-ext, commit a6bb9d2f81 ("first commit": a plain
    # OMB 7.4 tree with its generated configure), archived as
    # git archive --prefix=osu-micro-benchmarks-7.4/ a6bb9d2f81 | gzip -n.
    # The version is named for what it is, so that nothing mistakes it for the official
    # 7.4 release, and its checksum is verified like every other archive's. A site with
    # the official tarball builds osu-micro-benchmarks@7.4 instead (one line in spack/).
    version(
        "7.4-tree",
        sha256="8eba37df7d825973e539fae69cc3541498385879a192d7e2263866fd7c79e38c",
        url="https://github.com/johnpzh/osu-micro-benchmarks-7.4-ext/archive/a6bb9d2f81.tar.gz",
    )
