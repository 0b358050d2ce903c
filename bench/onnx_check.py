"""Checks an exported flipzero model with an independent runtime (ONNX Runtime).

Usage: python3 bench/onnx_check.py MODEL_DIR CASE_DIR
CASE_DIR holds inputs.npy [N, planes, H, W] and Burn's outputs for them:
policy_logits.npy [N, P], wdl.npy [N, 3] (probabilities), score.npy [N, 1].
Exits non-zero, saying why, when ONNX Runtime disagrees by more than 1e-4, when the
graph's names or dynamic batch axis are not as documented, or when the safetensors
files do not hold the network's tensors.
"""
import json
import sys

import numpy as np
import onnxruntime as ort
from safetensors.numpy import load_file

model_dir, case_dir = sys.argv[1], sys.argv[2]
meta = json.load(open(f"{model_dir}/model.json"))
sess = ort.InferenceSession(f"{model_dir}/model.onnx", providers=["CPUExecutionProvider"])
inputs = [i.name for i in sess.get_inputs()]
outputs = [o.name for o in sess.get_outputs()]
assert inputs == ["planes"], inputs
assert outputs == ["policy_logits", "wdl_logits", "score"], outputs
assert sess.get_modelmeta().custom_metadata_map["flipzero.model_json"], "metadata"

x = np.load(f"{case_dir}/inputs.npy")
want_policy = np.load(f"{case_dir}/policy_logits.npy")
want_wdl = np.load(f"{case_dir}/wdl.npy")
want_score = np.load(f"{case_dir}/score.npy")
assert x.shape[1:] == (len(meta["input_planes"]), meta["height"], meta["width"]), x.shape

def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)

worst = 0.0
# The whole batch at once, then one position at a time: the batch axis is dynamic.
for batch in (x, x[:1]):
    policy, wdl, score = sess.run(None, {"planes": batch})
    n = batch.shape[0]
    assert policy.shape == (n, meta["policy_size"]), policy.shape
    for got, want in ((policy, want_policy[:n]), (softmax(wdl), want_wdl[:n]), (score, want_score[:n])):
        worst = max(worst, float(np.abs(got - want).max()))
print(f"max |onnxruntime - burn| = {worst:.3g}")
if worst > 1e-4:
    sys.exit(f"ONNX Runtime disagrees with Burn by {worst}")

burn = load_file(f"{model_dir}/model.safetensors")
torch_names = load_file(f"{model_dir}/model.pytorch.safetensors")
assert len(burn) == len(torch_names) > 0
assert "stem.conv.weight" in burn and "stem.bn.gamma" in burn and "stem.bn.weight" in torch_names
fc = burn["value_fc.weight"]
assert torch_names["value_fc.weight"].shape == fc.shape[::-1], "PyTorch layout: Linear weight [out, in]"
print(f"safetensors: {len(burn)} tensors")
