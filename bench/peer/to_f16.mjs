// to_f16.mjs — a copy of a model folder with every F32 tensor of its safetensors file(s) stored as F16
// (round to nearest even), for the half-storage benchmarks (make bench-decode: tokens/s with weights
// 'half') of checkpoints that the generators write in f32 only (tests/ref/export_onnx_families.py).
//
//   node bench/peer/to_f16.mjs SRC_DIR DST_DIR
import { readFileSync, writeFileSync, mkdirSync, readdirSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';

const [src, dst] = process.argv.slice(2);
if (!src || !dst) { console.error('usage: node bench/peer/to_f16.mjs SRC_DIR DST_DIR'); process.exit(2); }
mkdirSync(dst, { recursive: true });
const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
function half(x) {
  f32[0] = x;
  const u = u32[0], sign = (u >>> 16) & 0x8000, e = (u >>> 23) & 0xff, m = u & 0x7fffff;
  if (e === 0xff) return sign | 0x7c00 | (m ? 0x200 : 0);
  let ex = e - 127 + 15;
  if (ex >= 0x1f) return sign | 0x7c00;
  if (ex <= 0) {
    if (ex < -10) return sign;
    const mm = m | 0x800000, shift = 14 - ex, r = mm >>> shift, rem = mm & ((1 << shift) - 1), halfway = 1 << (shift - 1);
    return sign | (r + (rem > halfway || (rem === halfway && (r & 1)) ? 1 : 0));
  }
  let r = (ex << 10) | (m >>> 13);
  const rem = m & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (r & 1))) r++;
  return sign | r;
}
for (const f of readdirSync(src)) {
  if (!f.endsWith('.safetensors')) { copyFileSync(join(src, f), join(dst, f)); continue; }
  const b = readFileSync(join(src, f));
  const n = Number(b.readBigUInt64LE(0)), head = JSON.parse(b.subarray(8, 8 + n).toString('utf8'));
  const names = Object.keys(head).filter((k) => k !== '__metadata__').sort((a, c) => head[a].data_offsets[0] - head[c].data_offsets[0]);
  const out = {}, parts = [];
  let off = 0;
  for (const k of names) {
    const t = head[k], [b0, b1] = t.data_offsets, raw = b.subarray(8 + n + b0, 8 + n + b1);
    let data = raw;
    if (t.dtype === 'F32') {
      const x = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length)), h = new Uint16Array(x.length);
      for (let i = 0; i < x.length; i++) h[i] = half(x[i]);
      data = Buffer.from(h.buffer);
    }
    out[k] = { dtype: t.dtype === 'F32' ? 'F16' : t.dtype, shape: t.shape, data_offsets: [off, off + data.length] };
    parts.push(data);
    off += data.length;
  }
  if (head.__metadata__) out.__metadata__ = head.__metadata__;
  let hj = Buffer.from(JSON.stringify(out));
  hj = Buffer.concat([hj, Buffer.alloc((8 - (hj.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8); len.writeBigUInt64LE(BigInt(hj.length));
  writeFileSync(join(dst, f), Buffer.concat([len, hj, ...parts]));
  console.log(`${join(dst, f)}: ${names.length} tensors, ${(off / 1e6).toFixed(1)} MB`);
}
