# fio with the papers' version (Takahashi et al. ran fio 3.38), which Spack's builtin
# repository does not have yet (its newest is 3.37).
from spack_repo.builtin.packages.fio.package import Fio as BuiltinFio

from spack.package import *


class Fio(BuiltinFio):
    """Flexible I/O Tester, with fio 3.38 (the papers' version) added."""

    # The archive of the tag fio-3.38 (= commit 5af800ca20) as the hosting site serves
    # tag archives (git archive --prefix=fio-fio-3.38/ | gzip -n), the method that
    # reproduces the builtin fio@3.37 checksum byte for byte.
    version(
        "3.38",
        sha256="73b3ca18a66fb88a90dae73b9994fdd18d35161d914ffe2089380760af5533cf",
        url="https://github.com/axboe/fio/archive/fio-3.38.tar.gz",
    )
