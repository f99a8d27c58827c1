"""What every demo shares: its result record and where its pictures go."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from minigrad.i18n import translator

_ = translator("attention")


@dataclass
class DemoResult:
    text: str
    values: dict = field(default_factory=dict)
    files: list = field(default_factory=list)


def svg_path(out_dir, name: str):
    """``out_dir/name`` (the folder is created), or None when no folder is given."""
    if out_dir is None:
        return None
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise NotADirectoryError(_("--out {out!r} exists and is not a folder").format(out=out_dir))
    os.makedirs(out_dir, exist_ok=True)
    return os.path.join(out_dir, name)
