"""Writes tour.ipynb from tour.py (the percent format: `# %%` starts a code cell,
`# %% [markdown]` a markdown cell of `# `-prefixed lines), so that the notebook and the
script are one source.

    python python/examples/notebook.py           # rewrites tour.ipynb
    python python/examples/notebook.py --check   # fails if tour.ipynb is out of date
"""

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def cells(script: str) -> list[dict]:
    out = []
    for chunk in script.split("# %%")[1:]:
        head, _, body = chunk.partition("\n")
        body = body.strip("\n")
        if head.strip() == "[markdown]":
            text = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.splitlines())
            out.append({"cell_type": "markdown", "metadata": {}, "source": text.splitlines(keepends=True)})
        else:
            out.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                        "source": body.splitlines(keepends=True)})
    return out


def notebook() -> str:
    nb = {
        "cells": cells((HERE / "tour.py").read_text()),
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 4,
    }
    return json.dumps(nb, indent=1) + "\n"


if __name__ == "__main__":
    target = HERE / "tour.ipynb"
    if "--check" in sys.argv:
        if not target.is_file() or target.read_text() != notebook():
            sys.exit(f"{target} is out of date: run python {pathlib.Path(__file__).name}")
    else:
        target.write_text(notebook())
        print("wrote", target)
