// ONNX Runtime Web (WebAssembly with SIMD, one thread) on a CNN's ONNX export, for the
// serverless player's choice of runtime (docs/web.md): positions/s at batch 1 and 16,
// random inputs of the model's planes on its 7×7 board, 3 s each.
//
//   mkdir -p /tmp/ortweb && cd /tmp/ortweb && npm install onnxruntime-web@1.20.1
//   cp "$OLDPWD/bench/ort-web.mjs" . && node ort-web.mjs "$OLDPWD/docs/strength/gen-0131"
import * as ort from "onnxruntime-web";
import fs from "fs";
import path from "path";

ort.env.wasm.numThreads = 1;
const dir = process.argv[2];
const meta = JSON.parse(fs.readFileSync(path.join(dir, "model.json")));
const planes = meta.input_planes.length;
const s = await ort.InferenceSession.create(fs.readFileSync(path.join(dir, "model.onnx")),
  { executionProviders: ["wasm"] });
const name = s.inputNames[0];
for (const batch of [1, 16]) {
  const x = new ort.Tensor("float32",
    new Float32Array(batch * planes * 49).map(() => (Math.random() < 0.3 ? 1 : 0)),
    [batch, planes, 7, 7]);
  await s.run({ [name]: x });
  let n = 0;
  const t = performance.now();
  while (performance.now() - t < 3000) { await s.run({ [name]: x }); n += batch; }
  const rate = Math.round(n / ((performance.now() - t) / 1000));
  console.log(`ONNX Runtime Web ${ort.env.versions.web}, WebAssembly SIMD, 1 thread, batch ${batch}: ${rate} positions/s`);
}
