"""ONNX Runtime speed on an exported flipzero model (positions/s), for side-by-side
figures with `flipzero bench net`.

Usage: python3 bench/ort_bench.py MODEL_DIR [THREADS]
"""
import json
import sys
import time

import numpy as np
import onnxruntime as ort

model_dir = sys.argv[1]
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
meta = json.load(open(f"{model_dir}/model.json"))
opts = ort.SessionOptions()
opts.intra_op_num_threads = threads
opts.inter_op_num_threads = 1
sess = ort.InferenceSession(f"{model_dir}/model.onnx", opts, providers=["CPUExecutionProvider"])
shape = (len(meta["input_planes"]), meta["height"], meta["width"])
rng = np.random.default_rng(0)
line = f"onnxruntime {ort.__version__}, {threads} thread(s), net {meta['network']['blocks']}x{meta['network']['channels']}:"
for batch in (1, 16, 64, 256):
    x = (rng.random((batch, *shape)) < 0.3).astype(np.float32)
    sess.run(None, {"planes": x})
    reps = max(4, min(64, 512 // batch))
    t = time.perf_counter()
    for _ in range(reps):
        sess.run(None, {"planes": x})
    line += f"  batch {batch}: {reps * batch / (time.perf_counter() - t):.0f}"
print(line)
