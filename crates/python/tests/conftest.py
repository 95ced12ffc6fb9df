"""Where the tests find their inputs: the project's compiled test policies (`make policies`),
Debian's policies, and the libsepol oracle (`make oracle`). A missing input fails the test that
needs it, never skips it."""

import os
import random
import subprocess
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("SEACCESS_ROOT", Path(__file__).resolve().parents[3]))
SELINUX = Path(os.environ.get("SEACCESS_SELINUX_DIR", "/etc/selinux"))
DEBIAN = {
    "default": SELINUX / "default" / "policy" / "policy.33",
    "mls": SELINUX / "mls" / "policy" / "policy.33",
}


def required(path: Path, how: str) -> Path:
    if not path.is_file():
        pytest.fail(f"{path} is missing: {how}", pytrace=False)
    return path


def own_policy(name: str) -> Path:
    """One of testdata/policies compiled at version 33."""
    return required(ROOT / "target" / "policies" / f"{name}.33", "run `make policies`")


def debian_policy(flavour: str) -> Path:
    return required(DEBIAN[flavour], "run `make deps` (selinux-policy-default, selinux-policy-mls)")


class Oracle:
    """libsepol's answers through tools/sepol-oracle (see its README)."""

    def __init__(self, path: Path):
        self.path = path

    def run(self, *args: str, stdin: str = "") -> list[str]:
        r = subprocess.run([str(self.path), *args], input=stdin, capture_output=True, text=True, check=True)
        return r.stdout.splitlines()

    def gen(self, policy: Path, seed: int, count: int) -> list[tuple[str, str, str]]:
        out = [tuple(line.split()) for line in self.run("gen", str(policy), str(seed), str(count))]
        assert len(out) == count and all(len(q) == 3 for q in out)
        return out  # type: ignore[return-value]

    def answer(self, mode: str, policy: Path, queries) -> list[str]:
        out = self.run(mode, str(policy), stdin="".join(f"{s} {t} {c}\n" for s, t, c in queries))
        assert len(out) == len(queries)
        return out

    def perms(self, policy: Path) -> dict[str, list[tuple[int, str]]]:
        by_class: dict[str, list[tuple[int, str]]] = {}
        for line in self.run("perms", str(policy)):
            cls, bit, name = line.split()
            by_class.setdefault(cls, []).append((int(bit), name))
        return by_class


@pytest.fixture(scope="session")
def oracle() -> Oracle:
    return Oracle(required(ROOT / "target" / "oracle" / "sepol-oracle", "run `make oracle`"))


@pytest.fixture
def rng() -> random.Random:
    return random.Random(11)
