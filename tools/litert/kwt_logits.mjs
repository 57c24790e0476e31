// SPDX-License-Identifier: Apache-2.0
// Float peer for `passim classify`: Google's LiteRT (the TFLite runtime, compiled to
// WebAssembly, npm @litertjs/core) runs a keyword-spotting .tflite on WAV clips and prints
// one line per clip: the path, then the model's output logits.
//
//   node tools/litert/kwt_logits.mjs MODEL.tflite A.wav [B.wav ...]
//
// LiteRT itself is installed by tools/setup.sh outside the source tree: $PASSIM_LITERT_DIR,
// else ${XDG_CACHE_HOME:-~/.cache}/passim/litert. Exits 3 with a message when it is missing.
//
// The clips are read as `passim classify` reads them (docs/kwt.md): 16 kHz mono 16-bit PCM,
// samples / 32768, a shorter clip zero-padded centred, a longer one cut to its middle.
// LiteRT is written for browsers; three shims let it load in Node: `self`, an
// `importScripts` that evaluates a local file, and a CommonJS `require`.
import fs from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import url from 'node:url';

const litertDir = process.env.PASSIM_LITERT_DIR ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'passim', 'litert');
const coreDir = path.join(litertDir, 'node_modules', '@litertjs', 'core');
if (!fs.existsSync(path.join(coreDir, 'package.json'))) {
  console.error(`kwt_logits: LiteRT is not installed in ${litertDir}: run bash tools/setup.sh`);
  process.exit(3);
}
const wasmDir = path.join(coreDir, 'wasm');

globalThis.self = globalThis;
globalThis.importScripts = (...scripts) => {
  for (const s of scripts) {
    const file = s.startsWith('file://') ? url.fileURLToPath(s) : s;
    (0, eval)(fs.readFileSync(file, 'utf8'));  // indirect eval: global scope
  }
};
globalThis.require = module.createRequire(import.meta.url);
globalThis.__dirname = wasmDir;
globalThis.__filename = path.join(wasmDir, 'litert_wasm_internal.js');

/** Samples (Float32Array of `length`) of a 16 kHz mono 16-bit PCM WAV file. */
function readClip(file, length) {
  const b = fs.readFileSync(file);
  const fail = (what) => { throw new Error(`${file}: ${what}`); };
  if (b.length < 12 || b.toString('latin1', 0, 4) !== 'RIFF' ||
      b.toString('latin1', 8, 12) !== 'WAVE') fail('not a RIFF/WAVE file');
  let fmt = null;
  let data = null;
  for (let at = 12; at + 8 <= b.length;) {
    const id = b.toString('latin1', at, at + 4);
    const size = b.readUInt32LE(at + 4);
    const body = b.subarray(at + 8, Math.min(b.length, at + 8 + size));
    if (id === 'fmt ') fmt = body;
    if (id === 'data') data = body;
    at += 8 + size + (size % 2);
  }
  if (!fmt || !data) fail('expected a fmt and a data chunk');
  const [format, channels, rate, bits] =
      [fmt.readUInt16LE(0), fmt.readUInt16LE(2), fmt.readUInt32LE(4), fmt.readUInt16LE(14)];
  if (format !== 1 || channels !== 1 || rate !== 16000 || bits !== 16) {
    fail(`expected 16 kHz mono 16-bit PCM, found format ${format}, ${channels} channels, ` +
         `${rate} Hz, ${bits} bits`);
  }
  const n = Math.floor(data.length / 2);
  const out = new Float32Array(length);
  const skip = n > length ? Math.floor((n - length) / 2) : 0;   // longer: the middle
  const pad = n < length ? Math.floor((length - n) / 2) : 0;    // shorter: centred
  for (let i = 0; i < Math.min(n, length); ++i) {
    out[pad + i] = data.readInt16LE(2 * (skip + i)) / 32768;
  }
  return out;
}

const [modelPath, ...clips] = process.argv.slice(2);
if (!modelPath || clips.length === 0) {
  console.error('usage: node kwt_logits.mjs MODEL.tflite A.wav [B.wav ...]');
  process.exit(2);
}
const {loadLiteRt, loadAndCompile, Tensor} = await import(
    url.pathToFileURL(module.createRequire(path.join(litertDir, 'package.json'))
        .resolve('@litertjs/core')).href);
await loadLiteRt(wasmDir + path.sep);
const model = await loadAndCompile(new Uint8Array(fs.readFileSync(modelPath)),
                                   {accelerator: 'wasm'});
const samples = 16000;
for (const clip of clips) {
  const input = new Tensor(readClip(clip, samples), [1, samples]);
  const outputs = await model.run(input);
  const logits = (await outputs[0].moveTo('wasm')).toTypedArray();
  // A model LiteRT failed to prepare still "runs" and returns garbage: refuse non-finite or
  // denormal logits rather than print them.
  if (!Array.from(logits).every((v) => Number.isFinite(v) && (v === 0 || Math.abs(v) > 1e-30))) {
    console.error(`${clip}: LiteRT returned invalid logits (did the model fail to prepare?)`);
    process.exit(1);
  }
  console.log([clip, ...Array.from(logits, (v) => v.toPrecision(9))].join(' '));
  input.delete();
  for (const o of outputs) o.delete();
}
