"""A model too large to train is refused by the application from its config, before anything
is allocated: the estimate bounds the real parameter count of every kind of model, and a config
above the cap (from the command line or a file anyone wrote) is one line naming what to make
smaller. The library's ``ModelConfig`` checks types and names only: a size is the program's."""
import subprocess
import sys

import numpy as np
import pytest

from models.app.build import build_model
from models.app.checks import MAX_PARAMETERS, check_model_size, estimated_parameters
from models.config import ModelConfig

KINDS = [dict(decoder="bahdanau", score="additive"), dict(decoder="bahdanau", score="concat"),
         dict(decoder="bahdanau", score="general"), dict(decoder="luong", score="general"),
         dict(decoder="luong", score="concat", cell="lstm", input_feeding=True),
         dict(decoder="luong", score="local-p", cell="lstm"), dict(decoder="plain"),
         dict(decoder="transformer", d_model=24, heads=4, ff=40, layers=2)]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: "-".join(str(v) for v in k.values()))
@pytest.mark.parametrize("sizes", [(8, 16, 24, 12, 30), (5, 7, 3, 11, 13), (16, 8, 8, 4, 60)])
def test_the_estimate_bounds_the_real_count(kind, sizes):
    e, h, s, a, v = sizes
    config = ModelConfig(src_vocab=v, tgt_vocab=v + 3, embed=e, hidden=h, dec_hidden=s, attn=a,
                         **kind)
    real = sum(p.data.size for p in build_model(config, np.random.default_rng(0)).parameters())
    assert real <= estimated_parameters(config) <= 2 * real


@pytest.mark.parametrize("fields, names", [
    (dict(decoder="transformer", layers=48, d_model=1024, ff=4096, heads=4), "layers, d_model"),
    (dict(embed=1024, hidden=1024, dec_hidden=1024, attn=1024, src_vocab=10_000,
          tgt_vocab=10_000), "embed, hidden"),
])
def test_a_config_above_the_cap_is_refused_naming_what_to_shrink(fields, names):
    config = ModelConfig(**{"src_vocab": 40, "tgt_vocab": 40, **fields})  # nothing allocated
    with pytest.raises(ValueError, match=rf"ModelConfig: about [\d,]+ parameters, more than the "
                                         rf"{MAX_PARAMETERS:,} this program trains; make {names}"):
        check_model_size(config)


@pytest.mark.parametrize("field, value, cap", [("hidden", 200_000, 1024), ("layers", 49, 48),
                                               ("src_vocab", 10_001, 10_000), ("ff", 4097, 4096)])
def test_a_size_above_its_cap_is_refused_naming_the_field(field, value, cap):
    config = ModelConfig(**{"src_vocab": 5, "tgt_vocab": 5, field: value})  # types, names: fine
    with pytest.raises(ValueError, match=rf"^ModelConfig: {field} must be a positive int "
                                         rf"\(at most {cap}\), got {value}$"):
        check_model_size(config)


def test_the_largest_widths_the_options_allow_still_build_a_config():
    config = ModelConfig(src_vocab=40, tgt_vocab=40, embed=1024, hidden=1024, dec_hidden=1024,
                         attn=1024)
    check_model_size(config)


def test_the_command_line_refuses_it_in_one_line_before_training(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "models", "train", "--decoder", "transformer", "--layers", "48",
         "--d-model", "1024", "--ff", "4096", "--out", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1 and "parameters, more than the 50,000,000" in lines[0]
    assert not (tmp_path / "run").exists()


def test_inspect_reads_a_transformer_run_which_has_no_recurrent_path(tmp_path):
    """``inspect`` splits ∂L/∂h_j into the attention and the recurrent paths; a Transformer's
    decoder has no recurrent state, so that path is zero (it used to crash on a None grad)."""
    run = str(tmp_path / "tr")
    subprocess.run([sys.executable, "-m", "models", "train", "--decoder", "transformer",
                    "--time-limit", "0", "--out", run], capture_output=True, timeout=300, check=True)
    result = subprocess.run([sys.executable, "-m", "models", "inspect", run], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode in (0, 1), result.stderr           # 1: a flagged (untrained) run
    line = next(x for x in result.stdout.splitlines() if "gradient through attention" in x)
    assert "100.0%" in line and "this decoder has no recurrent state" in line
