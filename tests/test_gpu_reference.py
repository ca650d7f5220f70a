"""The prepared GPU script's raw plans agree with nbgpu (issue 35): checked on numpy in a dry run.

On a GPU the same script times them (``NBGPU_GPU_STAGES=reference bash ci/gpu.sh``); here its
fewest-pass sums must equal nbgpu's statistics exactly, cuML-style float32 counting closely, and
its predictions nbgpu's, so the script cannot reach a GPU broken.
"""

import importlib.util
import json
from pathlib import Path

_SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "gpu_reference.py"


def test_the_reference_plans_agree_with_nbgpu_on_numpy(tmp_path):
    spec = importlib.util.spec_from_file_location("gpu_reference", _SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "ref.json"
    assert module.main(["--dry-run", "--size", "tiny", "--repeats", "1", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    for model in ("MultinomialNB", "GaussianNB"):
        assert all(ok is True or ok == 1.0 for ok in results[model]["checks"].values()), results[model]["checks"]
        assert set(results[model]["nbgpu"]) == {"fit", "predict", "validation", "labels", "sums", "finalize", "scores"}
