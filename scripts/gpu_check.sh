#!/usr/bin/env bash
# The GPU check of issue 34 in one call: the whole suite on the GPU, then the GPU benchmarks.
#
#   bash scripts/gpu_check.sh              # on a machine with a GPU and CuPy
#   NUMTORCH_CUPY_STANDIN=1 bash scripts/gpu_check.sh --dry
#                                          # a dry check on the CPU stand-in for CuPy: a few
#                                          # tests and each benchmark once at a tiny size
#
# Nothing is downloaded beyond `pip install -e .[test]` when numtorch is not importable.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
DRY=0
[[ "${1:-}" == "--dry" ]] && DRY=1
status=0

python -c "import numtorch" 2>/dev/null || pip install -q -e '.[test]' || exit 1
python - <<'PY'
import numtorch as nt
print("numtorch sees CUDA:", nt.cuda.is_available(), "devices:", nt.cuda.device_count())
try:
    import torch
    print("torch", torch.__version__, "sees CUDA:", torch.cuda.is_available())
except ImportError:
    print("torch: not installed (its column reads n/a)")
PY

echo "== tests"
if (( DRY )); then
    python -m pytest -q -p no:cacheprovider tests/test_cuda_transfers.py tests/test_cuda_device.py \
        tests/test_cuda_ops.py -k "transfers or add or conv or max_pool or cross_entropy" || status=1
else
    python -m pytest -n 8 -q -p no:cacheprovider || status=1
fi

echo "== benchmarks (device cuda)"
python benchmarks/bench_gpu.py --device cuda $( (( DRY )) && echo --dry ) || status=1
exit $status
