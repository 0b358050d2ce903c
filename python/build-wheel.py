"""Packs the extension module that `cargo build -p flipzero-python` built and the Python
half of the package (python/flipzero/) into a wheel, as maturin lays it out, without
building anything: `make test` builds the workspace once (tests profile) and installs
this wheel into the project's .venv.

    python python/build-wheel.py target/tests/lib_flipzero.so OUT_DIR   # prints the wheel's path
"""

import base64
import hashlib
import pathlib
import re
import sys
import zipfile

here = pathlib.Path(__file__).resolve().parent
so, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
version = re.search(r'^version = "([^"]+)"', (here.parent / "Cargo.toml").read_text(), re.M).group(1)
tag = "cp39-abi3-linux_x86_64"
name = f"flipzero-{version}"
files = {f"flipzero/{p.name}": p.read_bytes() for p in sorted((here / "flipzero").iterdir())
         if p.is_file() and not p.name.endswith((".so", ".pyc"))}
files["flipzero/_flipzero.abi3.so"] = so.read_bytes()
files[f"{name}.dist-info/METADATA"] = (
    f"Metadata-Version: 2.1\nName: flipzero\nVersion: {version}\nRequires-Python: >=3.9\n"
    "Requires-Dist: numpy\nProvides-Extra: env\n"
    "Requires-Dist: pettingzoo; extra == 'env'\nRequires-Dist: gymnasium; extra == 'env'\n"
    "Summary: Self-play training pipeline for Ataxx and its relatives, from Python\n"
).encode()
files[f"{name}.dist-info/WHEEL"] = (
    f"Wheel-Version: 1.0\nGenerator: flipzero build-wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n"
).encode()


def digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


record = "".join(f"{p},{digest(d)},{len(d)}\n" for p, d in files.items())
record += f"{name}.dist-info/RECORD,,\n"
files[f"{name}.dist-info/RECORD"] = record.encode()
out.mkdir(parents=True, exist_ok=True)
wheel = out / f"{name}-{tag}.whl"
tmp = wheel.with_suffix(".tmp")
with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
    for p, d in files.items():
        z.writestr(p, d)
tmp.replace(wheel)
print(wheel)
