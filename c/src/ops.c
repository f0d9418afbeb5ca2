/* ops.c — the kernels of the forward pass, each beside its reference twin.
 *
 * Fast kernels are written once against simd.h (alab_vf: W = ALAB_SIMD_WIDTH
 * floats) and have scalar tails for any size. The *_ref twins are plain loops,
 * accumulating in double where that makes them a better "truth"; the tests in
 * tests/c/test_ops.c compare the two on odd and real sizes.
 *
 * Legend: T rows (tokens), C input channels, OC output channels.
 * No kernel allocates: the matmuls pack what they reuse into fixed-size
 * buffers on the stack (8-24 KiB of weights, 64 KiB of input rows). */
#include "ops.h"
#include "simd.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define W ALAB_SIMD_WIDTH

#if defined(__GNUC__)
#define ALAB_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALAB_ALWAYS_INLINE inline
#endif

/* ============================================================= matmul
 * out (T,OC) = inp (T,C) @ w (C,OC) + bias (OC)      GPT-2 Conv1D layout.
 *
 * Blocking (after BLIS / llm.c's matmul_forward): C is cut into blocks of KC
 * rows of w (simd.h's ALAB_MM_KC), the output columns into strips of NR = MM_NV vectors. For one
 * (C block, strip) every block of MR = 4 rows of inp runs the micro-kernel:
 * MR x NV vector accumulators; per step of c one load of NV weight vectors,
 * one broadcast of inp[t][c] per row, MR*NV fused multiply-adds. Partial sums
 * of later C blocks are added onto out.
 *
 * Packing is fused into the first row block: it reads the KC x NR panel of w
 * in place (row stride OC) and also writes it to a contiguous stack buffer,
 * which the other row blocks then read. GPT-2's OC (768, 2304, 3072) are
 * multiples of 3 KiB, so the rows of a strip fall into a handful of L1 sets
 * and would be evicted between row blocks; the packed copy is read
 * sequentially and stays in L1. A separate packing pass costs a full strided
 * sweep of w for nothing when T is small; fused, it is one extra store per
 * weight vector of the first block. Strips are taken left to right, so the
 * rest of each cache line of w read by one strip is used by the next.
 * Columns left over after the full strips go through the same micro-kernel
 * with 1 vector, the last (< W) columns through a scalar loop.
 * With T <= 4 there is no reuse of w to exploit: mm_few_rows streams it.
 * matmul_forward_ld is the same with any row strides (ldo, ldi, ldw): the
 * attention multiplies heads in place inside the (T, 3C) qkv buffer with it.
 * The model's own layer weights go through matmul_packed_forward below. */

/* Rows of a register tile: 4 (tiles of 5 or 6 rows were slower, 3 x 3 and 2 x 4 no faster:
 * docs/BENCHMARKS.md). Settable at compile time for such experiments; the switches on the
 * rows left over below handle any MM_MR <= 4. */
#ifndef MM_MR
#define MM_MR 4
#endif
_Static_assert(MM_MR >= 1 && MM_MR <= 4, "the leftover-row switches handle MM_MR <= 4");
#ifndef MM_NV
#define MM_NV ALAB_MM_NV
#endif
#define MM_NR (MM_NV * W)
#ifndef MM_KC
#define MM_KC ALAB_MM_KC /* simd.h: 64 on wasm, 256 elsewhere */
#endif

/* One tile: out[i][j*W ..] (+)= sum_k inp[i][k] * src[k][j*W ..] for i < mr,
 * j < nv, src rows lds floats apart. first: start from bias (or 0) instead
 * of out. do_pack: also copy src to pack as kc contiguous rows of nv*W.
 * mr, nv and do_pack are compile-time constants at every call. */
static ALAB_ALWAYS_INLINE void mm_tile(float *out, const float *inp, const float *src, int lds,
                                       float *pack, int do_pack, const float *bias, int mr, int nv,
                                       int kc, int C, int OC, int first) {
    /* here C is the row stride of inp and OC the row stride of out */
    alab_vf acc[MM_MR][MM_NV];
    for (int i = 0; i < mr; i++) {
        for (int j = 0; j < nv; j++) {
            if (!first) acc[i][j] = alab_vf_load(out + (size_t)i * OC + j * W);
            else if (bias) acc[i][j] = alab_vf_load(bias + j * W);
            else acc[i][j] = alab_vf_zero();
        }
    }
    /* pointers stepped by hand: Emscripten builds with loop strength reduction
     * off, and V8 would then multiply k * lds in every iteration */
    const float *a[MM_MR];
    for (int i = 0; i < mr; i++) a[i] = inp + (size_t)i * C;
    const float *pk = src;
    float *pp = pack;
    for (int k = 0; k < kc; k++, pk += lds) {
        alab_vf wv[MM_NV];
        for (int j = 0; j < nv; j++) wv[j] = alab_vf_load(pk + j * W);
        if (do_pack) {
            for (int j = 0; j < nv; j++) alab_vf_store(pp + j * W, wv[j]);
            pp += nv * W;
        }
        for (int i = 0; i < mr; i++) {
            alab_vf ai = alab_vf_load1(a[i] + k);
            for (int j = 0; j < nv; j++) acc[i][j] = alab_vf_fma(ai, wv[j], acc[i][j]);
        }
    }
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nv; j++) alab_vf_store(out + (size_t)i * OC + j * W, acc[i][j]);
}

/* All T (> MM_MR) rows against one kc x (nv*W) panel of w (row stride OC):
 * the first block of MM_MR rows also packs the panel into pack, the other
 * blocks read the packed copy, then the 1..3 rows left. */
static ALAB_ALWAYS_INLINE void mm_rows(float *out, const float *inp, const float *w, float *pack,
                                       const float *bias, int nv, int kc, int T, int C, int OC,
                                       int ldw, int first) {
    /* C: row stride of inp, OC: of out, ldw: of w */
    const int lds = nv * W;
    int t = MM_MR;
    mm_tile(out, inp, w, ldw, pack, 1, bias, MM_MR, nv, kc, C, OC, first);
    for (; t + MM_MR <= T; t += MM_MR)
        mm_tile(out + (size_t)t * OC, inp + (size_t)t * C, pack, lds, NULL, 0, bias, MM_MR, nv, kc, C, OC, first);
    float *o = out + (size_t)t * OC;
    const float *in = inp + (size_t)t * C;
    switch (T - t) {
    case 3: mm_tile(o, in, pack, lds, NULL, 0, bias, 3, nv, kc, C, OC, first); break;
    case 2: mm_tile(o, in, pack, lds, NULL, 0, bias, 2, nv, kc, C, OC, first); break;
    case 1: mm_tile(o, in, pack, lds, NULL, 0, bias, 1, nv, kc, C, OC, first); break;
    default: break;
    }
}

/* T <= MM_MR (one token at a time, short prompts): no row of w is used more
 * than T times, so stream w row after row, 4 rows at a time, and update the
 * output rows in place: out[t] += sum_{r<4} inp[t][c+r] * w[c+r]. Long
 * sequential reads of w, no strided strips. */
static void mm_few_rows(float *out, int ldo, const float *inp, int ldi, const float *w, int ldw,
                        const float *bias, int T, int C, int OC) {
    for (int t = 0; t < T; t++)
        for (int o = 0; o < OC; o++) out[(size_t)t * ldo + o] = bias ? bias[o] : 0.0f;
    int c = 0;
    for (; c + 4 <= C; c += 4) {
        const float *w0 = w + (size_t)c * ldw, *w1 = w0 + ldw, *w2 = w1 + ldw, *w3 = w2 + ldw;
        for (int t = 0; t < T; t++) {
            const float *x = inp + (size_t)t * ldi + c;
            float *y = out + (size_t)t * ldo;
            alab_vf a0 = alab_vf_set1(x[0]), a1 = alab_vf_set1(x[1]);
            alab_vf a2 = alab_vf_set1(x[2]), a3 = alab_vf_set1(x[3]);
            int o = 0;
            for (; o + W <= OC; o += W) {
                alab_vf acc = alab_vf_load(y + o);
                acc = alab_vf_fma(a0, alab_vf_load(w0 + o), acc);
                acc = alab_vf_fma(a1, alab_vf_load(w1 + o), acc);
                acc = alab_vf_fma(a2, alab_vf_load(w2 + o), acc);
                acc = alab_vf_fma(a3, alab_vf_load(w3 + o), acc);
                alab_vf_store(y + o, acc);
            }
            for (; o < OC; o++) y[o] = y[o] + x[0] * w0[o] + x[1] * w1[o] + x[2] * w2[o] + x[3] * w3[o];
        }
    }
    for (; c < C; c++)
        for (int t = 0; t < T; t++) axpy_f32(out + (size_t)t * ldo, inp[(size_t)t * ldi + c], w + (size_t)c * ldw, OC);
}

void matmul_forward_ld(float *out, int ldo, const float *inp, int ldi, const float *w, int ldw,
                       const float *bias, int T, int C, int OC) {
    /* (T,OC) rows ldo apart   (T,C) rows ldi apart   (C,OC) rows ldw apart   (OC) */
    float pack[MM_KC * MM_NR]; /* one packed panel: 24 KiB on AVX2, 2 KiB on SIMD128 */
    int oc_full = OC / MM_NR * MM_NR; /* columns in full strips */
    int oc_vec = OC / W * W;          /* columns in whole vectors */
    if (T <= 0 || OC <= 0) return;
    if (C <= 0) { /* empty sum: out = bias */
        for (int t = 0; t < T; t++)
            for (int o = 0; o < OC; o++) out[(size_t)t * ldo + o] = bias ? bias[o] : 0.0f;
        return;
    }
    if (T <= MM_MR) {
        mm_few_rows(out, ldo, inp, ldi, w, ldw, bias, T, C, OC);
        return;
    }
    for (int c0 = 0; c0 < C; c0 += MM_KC) {
        int kc = C - c0 < MM_KC ? C - c0 : MM_KC;
        int first = c0 == 0;
        const float *inp_c = inp + c0;           /* (T, kc), row stride ldi */
        const float *w_c = w + (size_t)c0 * ldw; /* (kc, OC), row stride ldw */
        for (int o = 0; o < oc_full; o += MM_NR)
            mm_rows(out + o, inp_c, w_c + o, pack, bias ? bias + o : NULL, MM_NV, kc, T, ldi, ldo, ldw, first);
        /* whole vectors left over (fewer than NV of them), one at a time */
        for (int o = oc_full; o < oc_vec; o += W)
            mm_rows(out + o, inp_c, w_c + o, pack, bias ? bias + o : NULL, 1, kc, T, ldi, ldo, ldw, first);
        /* the last OC % W columns, scalar */
        for (int t = 0; t < T; t++) {
            for (int o = oc_vec; o < OC; o++) {
                float acc = first ? (bias ? bias[o] : 0.0f) : out[(size_t)t * ldo + o];
                for (int k = 0; k < kc; k++) acc += inp_c[(size_t)t * ldi + k] * w_c[(size_t)k * ldw + o];
                out[(size_t)t * ldo + o] = acc;
            }
        }
    }
}

void matmul_forward(float *out, const float *inp, const float *w, const float *bias,
                    int T, int C, int OC) {
    /* (T,OC)         (T,C)            (C,OC)          (OC) */
    matmul_forward_ld(out, OC, inp, C, w, OC, bias, T, C, OC);
}

void matmul_forward_ld_ref(float *out, int ldo, const float *inp, int ldi, const float *w, int ldw,
                           const float *bias, int T, int C, int OC) {
    for (int t = 0; t < T; t++) {
        for (int o = 0; o < OC; o++) {
            double acc = bias ? (double)bias[o] : 0.0;
            for (int c = 0; c < C; c++) acc += (double)inp[(size_t)t * ldi + c] * (double)w[(size_t)c * ldw + o];
            out[(size_t)t * ldo + o] = (float)acc;
        }
    }
}

void matmul_forward_ref(float *out, const float *inp, const float *w, const float *bias,
                        int T, int C, int OC) {
    for (int t = 0; t < T; t++) {
        for (int o = 0; o < OC; o++) {
            double acc = bias ? (double)bias[o] : 0.0;
            for (int c = 0; c < C; c++) acc += (double)inp[(size_t)t * C + c] * (double)w[(size_t)c * OC + o];
            out[(size_t)t * OC + o] = (float)acc;
        }
    }
}

/* ====================================================== packed matmul
 * The same product with w stored panel by panel, in the order the kernel reads
 * it (the packing mm_rows does on the fly, done once when the model loads):
 * for each block of MM_KC rows of w (kc rows, the last may be shorter), the
 * kc x OC block is stored as its full strips of MM_NR columns one after the
 * other (each kc rows of MM_NR contiguous floats), then the leftover whole
 * vectors as strips of W columns, then the last OC % W columns row-major.
 * Same size as w (C * OC floats). Every panel is then read sequentially: no
 * strided first pass (GPT-2's row strides of 3 KiB and 12 KiB map the rows of a
 * strip onto a few L1 sets), and small T (decode, short prompts) streams w at
 * full speed through the same micro-kernel with mr = T. */

static size_t packed_index(int c, int o, int C, int OC) {
    const int c0 = c / MM_KC * MM_KC, kc = C - c0 < MM_KC ? C - c0 : MM_KC, k = c - c0;
    const int oc_full = OC / MM_NR * MM_NR, oc_vec = OC / W * W;
    const size_t base = (size_t)c0 * OC;
    if (o < oc_full) return base + (size_t)(o / MM_NR) * kc * MM_NR + (size_t)k * MM_NR + o % MM_NR;
    if (o < oc_vec) return base + (size_t)oc_full * kc + (size_t)((o - oc_full) / W) * kc * W + (size_t)k * W + (o - oc_full) % W;
    return base + (size_t)oc_vec * kc + (size_t)k * (OC - oc_vec) + (o - oc_vec);
}

void matmul_pack_weights(float *dst, const float *w, int C, int OC) {
    const int oc_full = OC / MM_NR * MM_NR, oc_vec = OC / W * W;
    float *d = dst;
    for (int c0 = 0; c0 < C; c0 += MM_KC) {
        const int kc = C - c0 < MM_KC ? C - c0 : MM_KC;
        const float *wc = w + (size_t)c0 * OC;
        for (int o = 0; o < oc_full; o += MM_NR)
            for (int k = 0; k < kc; k++, d += MM_NR) memcpy(d, wc + (size_t)k * OC + o, MM_NR * sizeof(float));
        for (int o = oc_full; o < oc_vec; o += W)
            for (int k = 0; k < kc; k++, d += W) memcpy(d, wc + (size_t)k * OC + o, W * sizeof(float));
        if (oc_vec < OC)
            for (int k = 0; k < kc; k++, d += OC - oc_vec)
                memcpy(d, wc + (size_t)k * OC + oc_vec, (size_t)(OC - oc_vec) * sizeof(float));
    }
}

/* The inverse of matmul_pack_weights: w (C, OC) from its packed copy wp (circuits.c reads a head's rows). */
void matmul_unpack_weights(float *w, const float *wp, int C, int OC) {
    const int oc_full = OC / MM_NR * MM_NR, oc_vec = OC / W * W;
    const float *d = wp;
    for (int c0 = 0; c0 < C; c0 += MM_KC) {
        const int kc = C - c0 < MM_KC ? C - c0 : MM_KC;
        float *wc = w + (size_t)c0 * OC;
        for (int o = 0; o < oc_full; o += MM_NR)
            for (int k = 0; k < kc; k++, d += MM_NR) memcpy(wc + (size_t)k * OC + o, d, MM_NR * sizeof(float));
        for (int o = oc_full; o < oc_vec; o += W)
            for (int k = 0; k < kc; k++, d += W) memcpy(wc + (size_t)k * OC + o, d, W * sizeof(float));
        if (oc_vec < OC)
            for (int k = 0; k < kc; k++, d += OC - oc_vec)
                memcpy(wc + (size_t)k * OC + oc_vec, d, (size_t)(OC - oc_vec) * sizeof(float));
    }
}

/* The same packed layout from the transpose: wt (OC, C), row o = column o of
 * w. The tied LM head is stored so (wte: (V, C)); evidence.c packs blocks of
 * its rows with this as it multiplies a batch of hidden states by them. */
void matmul_pack_weights_t(float *dst, const float *wt, int C, int OC) {
    const int oc_full = OC / MM_NR * MM_NR, oc_vec = OC / W * W;
    float *d = dst;
    for (int c0 = 0; c0 < C; c0 += MM_KC) {
        const int kc = C - c0 < MM_KC ? C - c0 : MM_KC;
        for (int o = 0; o < oc_full; o += MM_NR)
            for (int k = 0; k < kc; k++, d += MM_NR)
                for (int j = 0; j < MM_NR; j++) d[j] = wt[(size_t)(o + j) * C + c0 + k];
        for (int o = oc_full; o < oc_vec; o += W)
            for (int k = 0; k < kc; k++, d += W)
                for (int j = 0; j < W; j++) d[j] = wt[(size_t)(o + j) * C + c0 + k];
        if (oc_vec < OC)
            for (int k = 0; k < kc; k++, d += OC - oc_vec)
                for (int j = 0; j < OC - oc_vec; j++) d[j] = wt[(size_t)(oc_vec + j) * C + c0 + k];
    }
}

/* Each block of MM_KC rows is packed within its own rows, so a matrix can be
 * packed in place one block at a time through a scratch of one block. */
size_t matmul_pack_scratch_floats(int OC) { return (size_t)MM_KC * (size_t)(OC > 0 ? OC : 0); }

void matmul_pack_weights_inplace(float *w, int C, int OC, float *scratch) {
    for (int c0 = 0; c0 < C; c0 += MM_KC) {
        const int kc = C - c0 < MM_KC ? C - c0 : MM_KC;
        float *blk = w + (size_t)c0 * OC;
        matmul_pack_weights(scratch, blk, kc, OC);
        memcpy(blk, scratch, (size_t)kc * OC * sizeof(float));
    }
}

/* The packed kernel also packs the rows of inp it multiplies: per block of MM_KC
 * columns and MMP_RC rows, each group of MM_MR rows is copied k-major (for each
 * k the mr values of the group side by side, a stack buffer of 64 KiB). The
 * micro-kernel then steps two pointers by constants, and every load in its
 * loop has a constant offset: on wasm, where each load otherwise needs its
 * address computed by an integer add, that is 4 instructions fewer per k of
 * 22 and the loop is no longer bound by the instruction front end. */
#ifndef MMP_RC
#define MMP_RC 64
#endif

/* The panel of one strip is nsub pieces of kc rows, one per block of MM_KC rows of
 * the packed matrix (mmp_forward_range below): after each piece, pb jumps by
 * `jump` floats to the same strip's piece in the next block. */
static ALAB_ALWAYS_INLINE void mmp_tile(float *out, int ldo, const float *ap, const float *panel,
                                        const float *bias, int mr, int nv, int kc, int nsub, size_t jump,
                                        int first) {
    alab_vf acc[MM_MR][MM_NV];
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nv; j++) {
            if (!first) acc[i][j] = alab_vf_load(out + (size_t)i * ldo + j * W);
            else if (bias) acc[i][j] = alab_vf_load(bias + j * W);
            else acc[i][j] = alab_vf_zero();
        }
    const float *pa = ap, *pb = panel;
    for (int q = 0; q < nsub; q++, pb += jump) {
        for (int k = 0; k < kc; k++) {
            alab_vf wv[MM_NV];
            for (int j = 0; j < nv; j++) wv[j] = alab_vf_load(pb + j * W);
            for (int i = 0; i < mr; i++) {
                alab_vf ai = alab_vf_load1(pa + i);
                for (int j = 0; j < nv; j++) acc[i][j] = alab_vf_fma(ai, wv[j], acc[i][j]);
            }
            pa += mr;
            pb += nv * W;
        }
    }
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nv; j++) alab_vf_store(out + (size_t)i * ldo + j * W, acc[i][j]);
}

/* One or two rows (decode, the end of a block): too few accumulators to hide
 * the add latency, so even and odd k go to two sets, summed at the end. */
static ALAB_ALWAYS_INLINE void mmp_tile_few(float *out, int ldo, const float *ap, const float *panel,
                                            const float *bias, int mr, int nv, int kc, int nsub, size_t jump,
                                            int first) {
    alab_vf acc[2][MM_NV], acc2[2][MM_NV];
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nv; j++) {
            if (!first) acc[i][j] = alab_vf_load(out + (size_t)i * ldo + j * W);
            else if (bias) acc[i][j] = alab_vf_load(bias + j * W);
            else acc[i][j] = alab_vf_zero();
            acc2[i][j] = alab_vf_zero();
        }
    const float *pa = ap, *pb = panel;
    for (int q = 0; q < nsub; q++, pb += jump) {
        int k = 0;
        for (; k + 2 <= kc; k += 2) {
            alab_vf w0[MM_NV], w1[MM_NV];
            for (int j = 0; j < nv; j++) w0[j] = alab_vf_load(pb + j * W), w1[j] = alab_vf_load(pb + nv * W + j * W);
            for (int i = 0; i < mr; i++) {
                alab_vf a0 = alab_vf_load1(pa + i), a1 = alab_vf_load1(pa + mr + i);
                for (int j = 0; j < nv; j++) {
                    acc[i][j] = alab_vf_fma(a0, w0[j], acc[i][j]);
                    acc2[i][j] = alab_vf_fma(a1, w1[j], acc2[i][j]);
                }
            }
            pa += 2 * mr;
            pb += 2 * nv * W;
        }
        if (k < kc) {
            for (int i = 0; i < mr; i++) {
                alab_vf a0 = alab_vf_load1(pa + i);
                for (int j = 0; j < nv; j++) acc[i][j] = alab_vf_fma(a0, alab_vf_load(pb + j * W), acc[i][j]);
            }
            pa += mr;
            pb += nv * W;
        }
    }
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nv; j++) alab_vf_store(out + (size_t)i * ldo + j * W, alab_vf_add(acc[i][j], acc2[i][j]));
}

/* rows (<= MMP_RC) packed rows against one strip's panel (nsub pieces of kc rows) */
static ALAB_ALWAYS_INLINE void mmp_rows(float *out, int OC, const float *apack, const float *panel,
                                        const float *bias, int nv, int kc, int nsub, size_t jump, int rows,
                                        int first) {
    const int ka = kc * nsub; /* columns of apack per row */
    int t = 0;
    for (; t + MM_MR <= rows; t += MM_MR)
        mmp_tile(out + (size_t)t * OC, OC, apack + (size_t)t * ka, panel, bias, MM_MR, nv, kc, nsub, jump, first);
    float *o = out + (size_t)t * OC;
    const float *a = apack + (size_t)t * ka;
    switch (rows - t) {
    case 3: mmp_tile(o, OC, a, panel, bias, 3, nv, kc, nsub, jump, first); break;
    case 2: mmp_tile_few(o, OC, a, panel, bias, 2, nv, kc, nsub, jump, first); break;
    case 1: mmp_tile_few(o, OC, a, panel, bias, 1, nv, kc, nsub, jump, first); break;
    default: break;
    }
}

/* Blocks of MM_KC rows of w one pass takes: with many rows (T > MMP_SUPER_T) a
 * pass covers MMP_SUPER consecutive full blocks (256 rows of w), so each tile's
 * accumulators go through memory once per 256 k, not once per MM_KC; with few
 * rows the small blocks keep the pass's working set small. On wasm (MM_KC 64)
 * that is 28 vs 33.5 ms at T = 11 and the old speed at T >= 32 (BENCHMARKS). */
#ifndef MMP_SUPER
#define MMP_SUPER (MM_KC < 256 ? 256 / MM_KC : 1)
#endif
#ifndef MMP_SUPER_T
#define MMP_SUPER_T 16
#endif

/* Strips [s0, s1) of the full strips, and with `rest` the leftover whole
 * vectors and the last OC % W columns, of matmul_packed_forward's product.
 * Every output value is computed by the same instructions whatever the range,
 * so the parts of matmul_packed_forward_part add up to the whole bit for bit. */
static void mmp_forward_range(float *out, const float *inp, const float *wp, const float *bias,
                              int T, int C, int OC, int s0, int s1, int rest, int T_plan) {
    /* (T,OC)                (T,C)            (C,OC) packed       (OC) */
    float apack[MMP_RC * MM_KC * MMP_SUPER];
    const int oc_full = OC / MM_NR * MM_NR, oc_vec = OC / W * W;
    if (T <= 0 || OC <= 0) return;
    if (C <= 0) {
        const int o0 = s0 * MM_NR, o1 = rest ? OC : s1 * MM_NR;
        for (int t = 0; t < T; t++)
            for (int o = o0; o < o1; o++) out[(size_t)t * OC + o] = bias ? bias[o] : 0.0f;
        return;
    }
    if (s0 >= s1 && !rest) return;
    const int super = T_plan > MMP_SUPER_T ? MMP_SUPER : 1; /* T_plan: see matmul_packed_forward_plan */
    for (int c0 = 0; c0 < C;) {
        const int kc = C - c0 < MM_KC ? C - c0 : MM_KC, first = c0 == 0;
        int nsub = 1; /* full blocks only go together: their pieces are MM_KC * OC floats apart */
        if (kc == MM_KC) {
            nsub = (C - c0) / MM_KC;
            if (nsub > super) nsub = super;
        }
        const int ka = kc * nsub;
        const float *wc = wp + (size_t)c0 * OC;
        for (int r0 = 0; r0 < T; r0 += MMP_RC) {
            const int rows = T - r0 < MMP_RC ? T - r0 : MMP_RC;
            /* pack rows r0.. of inp[:, c0:c0+ka]: groups of MM_MR rows (the last may be fewer), k-major */
            for (int g = 0; g < rows; g += MM_MR) {
                const int mr = rows - g < MM_MR ? rows - g : MM_MR;
                float *d = apack + (size_t)g * ka;
                const float *src = inp + (size_t)(r0 + g) * C + c0;
                for (int i = 0; i < mr; i++)
                    for (int k = 0; k < ka; k++) d[(size_t)k * mr + i] = src[(size_t)i * C + k];
            }
            float *o0 = out + (size_t)r0 * OC;
            const size_t jump = (size_t)kc * OC - (size_t)kc * MM_NR; /* end of a piece -> the next block's */
            const float *p = wc + (size_t)s0 * kc * MM_NR;
            for (int o = s0 * MM_NR; o < s1 * MM_NR; o += MM_NR, p += (size_t)kc * MM_NR)
                mmp_rows(o0 + o, OC, apack, p, bias ? bias + o : NULL, MM_NV, kc, nsub, jump, rows, first);
            if (!rest) continue;
            p = wc + (size_t)oc_full * kc;
            for (int o = oc_full; o < oc_vec; o += W, p += (size_t)kc * W)
                mmp_rows(o0 + o, OC, apack, p, bias ? bias + o : NULL, 1, kc, nsub, (size_t)kc * OC - (size_t)kc * W,
                         rows, first);
            if (oc_vec < OC) { /* p: kc rows of the OC - oc_vec last columns, in each of the nsub blocks */
                const int n = OC - oc_vec;
                for (int t = r0; t < r0 + rows; t++)
                    for (int o = 0; o < n; o++) {
                        float acc = first ? (bias ? bias[oc_vec + o] : 0.0f) : out[(size_t)t * OC + oc_vec + o];
                        for (int q = 0; q < nsub; q++) {
                            const float *pq = p + (size_t)q * kc * OC;
                            for (int k = 0; k < kc; k++) acc += inp[(size_t)t * C + c0 + q * kc + k] * pq[(size_t)k * n + o];
                        }
                        out[(size_t)t * OC + oc_vec + o] = acc;
                    }
            }
        }
        c0 += ka;
    }
}

void matmul_packed_forward(float *out, const float *inp, const float *wp, const float *bias,
                           int T, int C, int OC) {
    mmp_forward_range(out, inp, wp, bias, T, C, OC, 0, OC > 0 ? OC / MM_NR : 0, 1, T);
}

void matmul_packed_forward_part(float *out, const float *inp, const float *wp, const float *bias,
                                int T, int C, int OC, int part, int nparts) {
    matmul_packed_forward_plan(out, inp, wp, bias, T, C, OC, part, nparts, T);
}

void matmul_packed_forward_plan(float *out, const float *inp, const float *wp, const float *bias,
                                int T, int C, int OC, int part, int nparts, int T_plan) {
    if (nparts < 1 || part < 0 || part >= nparts || OC <= 0) return;
    const int strips = OC / MM_NR;
    const int s0 = (int)((long long)strips * part / nparts), s1 = (int)((long long)strips * (part + 1) / nparts);
    mmp_forward_range(out, inp, wp, bias, T, C, OC, s0, s1, part == nparts - 1, T_plan);
}

int matmul_packed_strip(void) { return MM_NR; }

void matmul_packed_forward_ref(float *out, const float *inp, const float *wp, const float *bias,
                               int T, int C, int OC) {
    for (int t = 0; t < T; t++) {
        for (int o = 0; o < OC; o++) {
            double acc = bias ? (double)bias[o] : 0.0;
            for (int c = 0; c < C; c++) acc += (double)inp[(size_t)t * C + c] * (double)wp[packed_index(c, o, C, OC)];
            out[(size_t)t * OC + o] = (float)acc;
        }
    }
}

/* ========================================================== matmul_nt
 * out (T,OC) = inp (T,C) @ w^T, w (OC,C): every output is a dot product of two
 * contiguous rows. The micro-kernel takes NT_MR rows of inp and NT_NR rows of
 * w at once (NT_MR * NT_NR vector accumulators), so each loaded vector of w is
 * used NT_MR times and each vector of inp NT_NR times; the accumulators are
 * reduced horizontally at the end, the last C % W columns added scalar. A
 * single row of inp (the LM head of one position: OC = V = 50257, C = 768)
 * has no reuse of w and goes through nt_row1, which streams wte once. */

#ifndef NT_MR
#define NT_MR 2
#endif
#ifndef NT_NR
#define NT_NR 4
#endif
/* Parts of matmul_nt_forward_part start at multiples of this many rows of w. */
#define NT_PART_ROWS 8
#define NT_NRMAX NT_NR

static ALAB_ALWAYS_INLINE void nt_tile(float *out, const float *inp, const float *w,
                                       int mr, int nr, int C, int ldo) {
    alab_vf acc[NT_MR][NT_NRMAX];
    const float *a[NT_MR], *b[NT_NRMAX]; /* stepped by hand, as in mm_tile */
    int cv = C / W * W;
    for (int i = 0; i < mr; i++) a[i] = inp + (size_t)i * C;
    for (int j = 0; j < nr; j++) b[j] = w + (size_t)j * C;
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++) acc[i][j] = alab_vf_zero();
    for (int c = 0; c < cv; c += W) {
        alab_vf wv[NT_NRMAX];
        for (int j = 0; j < nr; j++) wv[j] = alab_vf_load(b[j]), b[j] += W;
        for (int i = 0; i < mr; i++) {
            alab_vf x = alab_vf_load(a[i]);
            a[i] += W;
            for (int j = 0; j < nr; j++) acc[i][j] = alab_vf_fma(x, wv[j], acc[i][j]);
        }
    }
    for (int i = 0; i < mr; i++) {
        for (int j = 0; j < nr; j++) {
            float s = alab_vf_reduce_sum(acc[i][j]);
            for (int c = cv; c < C; c++) s += inp[(size_t)i * C + c] * w[(size_t)j * C + c];
            out[(size_t)i * ldo + j] = s;
        }
    }
}

/* n output columns of mr rows, out rows ldo floats apart */
/* One row of inp (the LM head of one position) against one row of w: bound by
 * streaming w, so each row of w is read front to back (one sequential stream the
 * hardware prefetcher follows), with 4 accumulators against the add latency. An
 * 8-row tile that reads 8 rows side by side had the LM head at 8 ms of a 33 ms
 * distilgpt2 forward in wasm; this is 4.5 ms (docs/BENCHMARKS.md). */
static ALAB_ALWAYS_INLINE float nt_row1(const float *x, const float *wr, int C) {
    alab_vf a0 = alab_vf_zero(), a1 = alab_vf_zero(), a2 = alab_vf_zero(), a3 = alab_vf_zero();
    const int cv = C / (4 * W) * (4 * W);
    int c = 0;
    for (; c < cv; c += 4 * W) {
        a0 = alab_vf_fma(alab_vf_load(x + c), alab_vf_load(wr + c), a0);
        a1 = alab_vf_fma(alab_vf_load(x + c + W), alab_vf_load(wr + c + W), a1);
        a2 = alab_vf_fma(alab_vf_load(x + c + 2 * W), alab_vf_load(wr + c + 2 * W), a2);
        a3 = alab_vf_fma(alab_vf_load(x + c + 3 * W), alab_vf_load(wr + c + 3 * W), a3);
    }
    float sum = alab_vf_reduce_sum(alab_vf_add(alab_vf_add(a0, a1), alab_vf_add(a2, a3)));
    for (; c < C; c++) sum += x[c] * wr[c];
    return sum;
}

static ALAB_ALWAYS_INLINE void nt_cols(float *out, const float *inp, const float *w,
                                       int mr, int C, int n, int ldo) {
    int o = 0;
    if (mr == 1) {
        for (; o < n; o++) out[o] = nt_row1(inp, w + (size_t)o * C, C);
        return;
    }
    for (; o + NT_NR <= n; o += NT_NR) nt_tile(out + o, inp, w + (size_t)o * C, mr, NT_NR, C, ldo);
    for (; o < n; o++) nt_tile(out + o, inp, w + (size_t)o * C, mr, 1, C, ldo);
}

/* Columns [o0, o1) of out (T, OC). With many rows of inp (the LM head of a
 * batch of runs, evidence.c) the columns go in blocks of NT_BLOCK_BYTES of w,
 * which stay in cache while every row of inp passes over them; without the
 * blocks each pair of rows streamed all of w (25.7 MB for GPT-2's LM head)
 * from memory. A block is a multiple of NT_NR rows of w, so every output is
 * the same tile's dot product as without blocks, bit for bit. */
#define NT_BLOCK_BYTES (96 * 1024)
static void nt_forward_cols(float *out, const float *inp, const float *w, int T, int C, int OC, int o0, int o1) {
    int nb = (int)(NT_BLOCK_BYTES / ((size_t)C * sizeof(float))) / NT_NR * NT_NR;
    if (nb < NT_NR) nb = NT_NR;
    if (T <= NT_MR) nb = o1 - o0; /* one pass over w whatever the blocks: no reuse to win */
    for (int b0 = o0; b0 < o1; b0 += nb) {
        const int b1 = o1 - b0 < nb ? o1 : b0 + nb;
        const float *wo = w + (size_t)b0 * C;
        int t = 0;
        for (; t + NT_MR <= T; t += NT_MR) nt_cols(out + (size_t)t * OC + b0, inp + (size_t)t * C, wo, NT_MR, C, b1 - b0, OC);
        for (; t < T; t++) nt_cols(out + (size_t)t * OC + b0, inp + (size_t)t * C, wo, 1, C, b1 - b0, OC);
    }
}

void matmul_nt_forward(float *out, const float *inp, const float *w, int T, int C, int OC) {
    /* (T,OC)           (T,C)            (OC,C) */
    if (OC > 0) nt_forward_cols(out, inp, w, T, C, OC, 0, OC);
}

/* Each output is one dot product, reduced the same way whichever tile holds it,
 * so the parts add up to matmul_nt_forward bit for bit. Part boundaries are
 * multiples of NT_PART_ROWS columns. */
void matmul_nt_forward_part(float *out, const float *inp, const float *w, int T, int C, int OC,
                            int part, int nparts) {
    if (nparts < 1 || part < 0 || part >= nparts || OC <= 0) return;
    const int units = (OC + NT_PART_ROWS - 1) / NT_PART_ROWS;
    int o0 = (int)((long long)units * part / nparts) * NT_PART_ROWS, o1 = (int)((long long)units * (part + 1) / nparts) * NT_PART_ROWS;
    if (o1 > OC) o1 = OC;
    if (o0 < o1) nt_forward_cols(out, inp, w, T, C, OC, o0, o1);
}

void matmul_nt_forward_ref(float *out, const float *inp, const float *w, int T, int C, int OC) {
    for (int t = 0; t < T; t++) {
        for (int o = 0; o < OC; o++) {
            double acc = 0.0;
            for (int c = 0; c < C; c++) acc += (double)inp[(size_t)t * C + c] * (double)w[(size_t)o * C + c];
            out[(size_t)t * OC + o] = (float)acc;
        }
    }
}

/* ========================================================== layernorm
 * Per row, in f32 as PyTorch computes it (two passes, no cancellation): m0 = mean(x);
 * d = x - m0 (exact when x is near m0); corr = mean(d), var = mean(d^2) - corr^2
 * (the corrected two-pass algorithm); y = (d - corr) * rstd * w + b. Keeping
 * the mean as m0 + corr keeps rows with a large mean (GPT-2's residual stream
 * has a few huge channels) accurate to a few ulp of the deviations. Biased
 * variance, as PyTorch. */

static float sum_f32(const float *x, int n) {
    alab_vf s0 = alab_vf_zero(), s1 = alab_vf_zero();
    int i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
        s0 = alab_vf_add(s0, alab_vf_load(x + i));
        s1 = alab_vf_add(s1, alab_vf_load(x + i + W));
    }
    for (; i + W <= n; i += W) s0 = alab_vf_add(s0, alab_vf_load(x + i));
    float s = alab_vf_reduce_sum(alab_vf_add(s0, s1));
    for (; i < n; i++) s += x[i];
    return s;
}

void layernorm_forward(float *out, const float *inp, const float *w, const float *b,
                       int T, int C, float eps) {
    /* (T,C)            (T,C)            (C)             (C) */
    for (int t = 0; t < T; t++) {
        const float *x = inp + (size_t)t * C;
        float *y = out + (size_t)t * C;
        float m0 = sum_f32(x, C) / (float)C;
        alab_vf m = alab_vf_set1(m0);
        alab_vf s1 = alab_vf_zero(), s2 = alab_vf_zero();
        int i = 0;
        for (; i + W <= C; i += W) {
            alab_vf d = alab_vf_sub(alab_vf_load(x + i), m);
            s1 = alab_vf_add(s1, d);
            s2 = alab_vf_fma(d, d, s2);
        }
        float sd = alab_vf_reduce_sum(s1), sdd = alab_vf_reduce_sum(s2);
        for (; i < C; i++) sd += x[i] - m0, sdd += (x[i] - m0) * (x[i] - m0);
        float corr = sd / (float)C;
        float var = sdd / (float)C - corr * corr;
        float rstd = 1.0f / sqrtf((var > 0.0f ? var : 0.0f) + eps);
        alab_vf r = alab_vf_set1(rstd), cv = alab_vf_set1(corr);
        for (i = 0; i + W <= C; i += W) {
            alab_vf d = alab_vf_sub(alab_vf_sub(alab_vf_load(x + i), m), cv);
            alab_vf g = alab_vf_mul(alab_vf_load(w + i), r);
            alab_vf_store(y + i, alab_vf_fma(d, g, alab_vf_load(b + i)));
        }
        for (; i < C; i++) y[i] = (x[i] - m0 - corr) * (w[i] * rstd) + b[i];
    }
}

void layernorm_forward_ref(float *out, const float *inp, const float *w, const float *b,
                           int T, int C, float eps) {
    for (int t = 0; t < T; t++) {
        const float *x = inp + (size_t)t * C;
        float *y = out + (size_t)t * C;
        double mean = 0.0, var = 0.0;
        for (int i = 0; i < C; i++) mean += x[i];
        mean /= C;
        for (int i = 0; i < C; i++) var += (x[i] - mean) * (x[i] - mean);
        var /= C;
        double rstd = 1.0 / sqrt(var + (double)eps);
        for (int i = 0; i < C; i++) y[i] = (float)((x[i] - mean) * rstd * w[i] + b[i]);
    }
}

/* =============================================================== gelu
 * gelu_new(x) = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3).
 * Since 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u)), the fast kernel computes
 * x / (1 + exp(-2u)) with alab_vf_exp: no tanh, and no cancellation in 1 + tanh
 * for negative x. (Equivalently tanh(u) = 2/(1+exp(-2u)) - 1, within 2e-7
 * abs of tanhf on [-10, 10]; the test measures both.) For x < about -10.3 the exp
 * saturates and the result is a tiny negative number, as the true value is. */

#define GELU_K0 0.7978845608028654f /* sqrt(2/pi) */
#define GELU_K1 0.044715f

static ALAB_ALWAYS_INLINE alab_vf gelu_vf(alab_vf x) {
    alab_vf x3 = alab_vf_mul(alab_vf_mul(x, x), x);
    alab_vf u = alab_vf_mul(alab_vf_set1(-2.0f * GELU_K0), alab_vf_fma(alab_vf_set1(GELU_K1), x3, x));
    return alab_vf_div(x, alab_vf_add(alab_vf_set1(1.0f), alab_vf_exp(u)));
}

void gelu_forward(float *out, const float *inp, int N) {
    int i = 0;
    for (; i + W <= N; i += W) alab_vf_store(out + i, gelu_vf(alab_vf_load(inp + i)));
    if (i < N) { /* tail through a padded vector, so every element sees the same math */
        float buf[W] = {0};
        for (int k = 0; k < N - i; k++) buf[k] = inp[i + k];
        alab_vf_store(buf, gelu_vf(alab_vf_load(buf)));
        for (int k = 0; k < N - i; k++) out[i + k] = buf[k];
    }
}

void gelu_forward_ref(float *out, const float *inp, int N) {
    const double k0 = 0.79788456080286535588; /* sqrt(2/pi) */
    for (int i = 0; i < N; i++) {
        double x = inp[i];
        out[i] = (float)(0.5 * x * (1.0 + tanh(k0 * (x + 0.044715 * x * x * x))));
    }
}

/* ============================================================ softmax
 * One row: m = max; e_i = exp(x_i - m) (alab_vf_exp gives exactly 0 for -inf);
 * out = e / sum e. A row whose max is -inf (all masked) is all zeros. */

#define SM_BLOCK 256

void softmax_forward(float *out, const float *inp, int N) {
    if (N <= 0) return;
    alab_vf mv = alab_vf_set1(-INFINITY);
    int i = 0;
    for (; i + W <= N; i += W) mv = alab_vf_max(alab_vf_load(inp + i), mv);
    float maxv = alab_vf_reduce_max(mv);
    for (; i < N; i++) maxv = inp[i] > maxv ? inp[i] : maxv;
    if (maxv == -INFINITY) {
        for (i = 0; i < N; i++) out[i] = 0.0f;
        return;
    }
    /* two-level sum (blocks of SM_BLOCK, then the blocks) keeps the error of
     * the total near sqrt(N) eps instead of N eps for V = 50257 */
    alab_vf m = alab_vf_set1(maxv), sv = alab_vf_zero();
    for (i = 0; i + W <= N;) {
        alab_vf sb = alab_vf_zero();
        for (int end = i + SM_BLOCK; i + W <= N && i < end; i += W) {
            alab_vf e = alab_vf_exp(alab_vf_sub(alab_vf_load(inp + i), m));
            alab_vf_store(out + i, e);
            sb = alab_vf_add(sb, e);
        }
        sv = alab_vf_add(sv, sb);
    }
    float sum = alab_vf_reduce_sum(sv);
    if (i < N) { /* tail padded with -inf, which exp maps to 0 */
        float buf[W];
        for (int k = 0; k < W; k++) buf[k] = i + k < N ? inp[i + k] : -INFINITY;
        alab_vf_store(buf, alab_vf_exp(alab_vf_sub(alab_vf_load(buf), m)));
        for (int k = 0; k < N - i; k++) { out[i + k] = buf[k]; sum += buf[k]; }
    }
    alab_vf s = alab_vf_set1(1.0f / sum);
    for (i = 0; i + W <= N; i += W) alab_vf_store(out + i, alab_vf_mul(alab_vf_load(out + i), s));
    for (; i < N; i++) out[i] *= 1.0f / sum;
}

void softmax_forward_ref(float *out, const float *inp, int N) {
    double maxv = -INFINITY, sum = 0.0;
    for (int i = 0; i < N; i++) maxv = inp[i] > maxv ? inp[i] : maxv;
    if (maxv == -INFINITY) {
        for (int i = 0; i < N; i++) out[i] = 0.0f;
        return;
    }
    for (int i = 0; i < N; i++) sum += exp((double)inp[i] - maxv);
    for (int i = 0; i < N; i++) out[i] = (float)(exp((double)inp[i] - maxv) / sum);
}

/* ============================================================ vectors */

float dot_f32(const float *a, const float *b, int n) {
    alab_vf s0 = alab_vf_zero(), s1 = alab_vf_zero(), s2 = alab_vf_zero(), s3 = alab_vf_zero();
    int i = 0;
    for (; i + 4 * W <= n; i += 4 * W) {
        s0 = alab_vf_fma(alab_vf_load(a + i), alab_vf_load(b + i), s0);
        s1 = alab_vf_fma(alab_vf_load(a + i + W), alab_vf_load(b + i + W), s1);
        s2 = alab_vf_fma(alab_vf_load(a + i + 2 * W), alab_vf_load(b + i + 2 * W), s2);
        s3 = alab_vf_fma(alab_vf_load(a + i + 3 * W), alab_vf_load(b + i + 3 * W), s3);
    }
    for (; i + W <= n; i += W) s0 = alab_vf_fma(alab_vf_load(a + i), alab_vf_load(b + i), s0);
    float s = alab_vf_reduce_sum(alab_vf_add(alab_vf_add(s0, s1), alab_vf_add(s2, s3)));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

float dot_f32_ref(const float *a, const float *b, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += (double)a[i] * (double)b[i];
    return (float)s;
}

void axpy_f32(float *y, float alpha, const float *x, int n) {
    alab_vf al = alab_vf_set1(alpha);
    int i = 0;
    for (; i + W <= n; i += W) alab_vf_store(y + i, alab_vf_fma(al, alab_vf_load(x + i), alab_vf_load(y + i)));
    for (; i < n; i++) y[i] += alpha * x[i];
}

void axpy_f32_ref(float *y, float alpha, const float *x, int n) {
    for (int i = 0; i < n; i++) y[i] = (float)((double)y[i] + (double)alpha * (double)x[i]);
}

/* x - x is 0 for every finite x and NaN for inf and NaN; a sum of such terms
 * stays exactly 0 until one of them is not. Blocks of 1024 are summed with
 * vectors; the first block whose sum is not 0 is searched element by element.
 * (The model load checks every weight with it: in wasm the vector scan took
 * the check over 350 MB from about 500 to 200 ms of the load.) */
#define NF_BLOCK 1024
size_t first_nonfinite_f32(const float *x, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t end = n - i < NF_BLOCK ? n : i + NF_BLOCK, j = i;
        alab_vf s0 = alab_vf_zero(), s1 = alab_vf_zero();
        for (; j + 2 * W <= end; j += 2 * W) {
            alab_vf a = alab_vf_load(x + j), b = alab_vf_load(x + j + W);
            s0 = alab_vf_add(s0, alab_vf_sub(a, a));
            s1 = alab_vf_add(s1, alab_vf_sub(b, b));
        }
        float t = alab_vf_reduce_sum(alab_vf_add(s0, s1));
        for (; j < end; j++) t += x[j] - x[j];
        if (t != 0.0f) { /* NaN */
            for (j = i; j < end; j++)
                if (!isfinite(x[j])) return j;
        }
        i = end;
    }
    return n;
}

/* 16-bit weights kept as stored (half storage): a value is inf or NaN exactly when its exponent bits are all
 * set (F16: 0x7c00, BF16: 0x7f80), so the check needs no conversion. Per block of 1024 an OR of the compare
 * results (which the compiler vectorises), then the first hit of a block that has one. */
size_t first_nonfinite_16(const uint16_t *h, size_t n, int bf16) {
    const uint16_t m = bf16 ? 0x7f80u : 0x7c00u;
    size_t i = 0;
    while (i < n) {
        size_t end = n - i < NF_BLOCK ? n : i + NF_BLOCK;
        unsigned hit = 0;
        for (size_t j = i; j < end; j++) hit |= (unsigned)((h[j] & m) == m);
        if (hit)
            for (size_t j = i; j < end; j++)
                if ((h[j] & m) == m) return j;
        i = end;
    }
    return n;
}

/* A 16-bit value as f32, by its definition (sign, exponent, mantissa; subnormals): the twin's own decoding, so
 * that ops.c stands alone in the scalar and wasm test builds. */
static float half_value(uint16_t h, int bf16) {
    if (bf16) {
        const uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    const int e = (h >> 10) & 31, m = h & 1023;
    const float sign = (h & 0x8000) ? -1.0f : 1.0f;
    if (e == 31) return m ? NAN : sign * INFINITY;
    return sign * ldexpf((float)(e ? m + 1024 : m), (e ? e : 1) - 25);
}

/* The twin: each value decoded to f32 and tested there. */
size_t first_nonfinite_16_ref(const uint16_t *h, size_t n, int bf16) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(half_value(h[i], bf16))) return i;
    return n;
}

size_t first_nonfinite_f32_ref(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return i;
    return n;
}

void add_f32(float *out, const float *a, const float *b, int n) {
    int i = 0;
    for (; i + W <= n; i += W) alab_vf_store(out + i, alab_vf_add(alab_vf_load(a + i), alab_vf_load(b + i)));
    for (; i < n; i++) out[i] = a[i] + b[i];
}

/* ============================================================= argmax
 * The first index of the largest value (greedy decoding picks it every step:
 * V = 50257 scalar compares that each reload x[best] cost 2 % of a decode
 * step). One vector pass for the maximum, then the first index holding it.
 * NaN never wins, as in the reference (no comparison with it is true), except
 * at index 0, where the reference starts. */
int argmax_f32(const float *x, int n) {
    if (n <= 0) return 0;
    if (x[0] != x[0]) return 0;
    alab_vf m0 = alab_vf_set1(x[0]), m1 = m0;
    int i = 0;
    for (; i + 2 * W <= n; i += 2 * W) { /* max(x, m): a NaN in x keeps m (simd.h) */
        m0 = alab_vf_max(alab_vf_load(x + i), m0);
        m1 = alab_vf_max(alab_vf_load(x + i + W), m1);
    }
    for (; i + W <= n; i += W) m0 = alab_vf_max(alab_vf_load(x + i), m0);
    float m = alab_vf_reduce_max(alab_vf_max(m0, m1));
    for (; i < n; i++)
        if (x[i] > m) m = x[i];
    for (i = 0; i < n; i++)
        if (x[i] == m) return i;
    return 0;
}

int argmax_f32_ref(const float *x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* ------------------------------------------------------------------------ */
/* Top-k selection                                                            */
/* ------------------------------------------------------------------------ */

/* The order both twins rank by: larger value first, a NaN after every number,
 * equal values (and -0 == +0, NaN == NaN) by the lower index first. A strict
 * total order on (value, index) pairs, so the k best are one set in one order. */
static inline int topk_before(const float *x, int a, int b) {
    float u = x[a], v = x[b];
    int un = u != u, vn = v != v;
    if (un != vn) return vn; /* the number before the NaN */
    if (!un && u != v) return u > v;
    return a < b;
}

/* A binary min-heap of ids under topk_before: the root is the worst kept. */
static void topk_sift_down(int *h, int n, int i, const float *x) {
    for (;;) {
        int l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && topk_before(x, h[w], h[l])) w = l;
        if (r < n && topk_before(x, h[w], h[r])) w = r;
        if (w == i) return;
        int t = h[i]; h[i] = h[w]; h[w] = t;
        i = w;
    }
}

void topk_f32(int *ids, const float *x, int n, int k) {
    if (k > n) k = n;
    if (k <= 0) return;
    /* the first k, heapified; then each later id replaces the root if it ranks before it */
    for (int i = 0; i < k; i++) ids[i] = i;
    for (int i = k / 2 - 1; i >= 0; i--) topk_sift_down(ids, k, i, x);
    for (int i = k; i < n; i++) {
        if (!topk_before(x, i, ids[0])) continue;
        ids[0] = i;
        topk_sift_down(ids, k, 0, x);
    }
    /* heap sort: move the worst to the end, repeatedly, leaving the best first */
    for (int end = k - 1; end > 0; end--) {
        int t = ids[0]; ids[0] = ids[end]; ids[end] = t;
        topk_sift_down(ids, end, 0, x);
    }
}

void topk_f32_ref(int *ids, const float *x, int n, int k) {
    if (k > n) k = n;
    int m = 0; /* insertion into a sorted list of at most k ids: O(n k) */
    for (int i = 0; i < n; i++) {
        if (m == k && !topk_before(x, i, ids[k - 1])) continue;
        int pos = m < k ? m++ : k - 1;
        while (pos > 0 && topk_before(x, i, ids[pos - 1])) { ids[pos] = ids[pos - 1]; pos--; }
        ids[pos] = i;
    }
}

/* ------------------------------------------------------------------------ */
/* The kernels of the other families: RMSNorm, exact GELU, SwiGLU.           */
/* Small next to the products; the fast versions run in f32 with a float    */
/* accumulator per row, the twins in double.                                */
/* ------------------------------------------------------------------------ */

void rmsnorm_forward(float *out, const float *inp, const float *w, int T, int C, float eps) {
    for (int t = 0; t < T; t++) {
        const float *x = inp + (size_t)t * C;
        float *o = out + (size_t)t * C;
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
        int i = 0;
        for (; i + 4 <= C; i += 4) {
            s0 += x[i] * x[i];
            s1 += x[i + 1] * x[i + 1];
            s2 += x[i + 2] * x[i + 2];
            s3 += x[i + 3] * x[i + 3];
        }
        for (; i < C; i++) s0 += x[i] * x[i];
        const float r = 1.0f / sqrtf((s0 + s1 + s2 + s3) / (float)C + eps);
        for (i = 0; i < C; i++) o[i] = x[i] * r * w[i];
    }
}

void rmsnorm_forward_ref(float *out, const float *inp, const float *w, int T, int C, float eps) {
    for (int t = 0; t < T; t++) {
        const float *x = inp + (size_t)t * C;
        double s = 0.0;
        for (int i = 0; i < C; i++) s += (double)x[i] * x[i];
        const double r = 1.0 / sqrt(s / C + eps);
        for (int i = 0; i < C; i++) out[(size_t)t * C + i] = (float)(x[i] * r * w[i]);
    }
}

/* Exact GELU without erff: 0.5 x (1 + erf(x / sqrt 2)) = max(x, 0) - 0.5 |x| erfc(|x| / sqrt 2), with
 * erfc(z) for z >= 0 as Numerical Recipes' erfcc (Chebyshev fit, fractional error < 1.2e-7):
 * erfc(z) = t exp(-z^2 - 1.26551223 + t P(t)), t = 1 / (1 + z / 2). No cancellation for negative x (the result
 * is the small term itself); |x| is capped at 32 in that term (erfc(22.6) is 0 in float), so +-inf give inf
 * and 0. SwiGLU (below) and this one were scalar erff / expf loops: 4 % of a SmolLM2-shaped forward at T = 128
 * in wasm (V8 CPU profile), now one vector pass each. */
#define ERFC_C0 (-1.26551223f)
static const float erfc_poly[9] = {1.00002368f, 0.37409196f, 0.09678418f, -0.18628806f, 0.27886807f,
                                   -1.13520398f, 1.48851587f, -0.82215223f, 0.17087277f};

static ALAB_ALWAYS_INLINE alab_vf gelu_exact_vf(alab_vf x) {
    const alab_vf zero = alab_vf_zero();
    alab_vf ax = alab_vf_min(alab_vf_set1(32.0f), alab_vf_max(x, alab_vf_sub(zero, x))); /* NaN stays NaN */
    alab_vf z = alab_vf_mul(ax, alab_vf_set1(0.70710678118654752f));
    alab_vf t = alab_vf_div(alab_vf_set1(1.0f), alab_vf_fma(z, alab_vf_set1(0.5f), alab_vf_set1(1.0f)));
    alab_vf p = alab_vf_set1(erfc_poly[8]);
    for (int i = 7; i >= 0; i--) p = alab_vf_fma(p, t, alab_vf_set1(erfc_poly[i]));
    alab_vf e = alab_vf_fma(p, t, alab_vf_sub(alab_vf_set1(ERFC_C0), alab_vf_mul(z, z)));
    alab_vf erfc = alab_vf_mul(t, alab_vf_exp(e));
    return alab_vf_sub(alab_vf_max(zero, x), alab_vf_mul(alab_vf_mul(alab_vf_set1(0.5f), ax), erfc));
}

static ALAB_ALWAYS_INLINE alab_vf swiglu_vf(alab_vf g, alab_vf u) {
    /* silu(g) u = g / (1 + exp(-g)) u; exp saturates at 2.4e38 for g < -88, giving a tiny product, as expf's inf
     * gave 0 */
    return alab_vf_mul(alab_vf_div(g, alab_vf_add(alab_vf_set1(1.0f), alab_vf_exp(alab_vf_sub(alab_vf_zero(), g)))), u);
}

void gelu_exact_forward(float *out, const float *inp, int N) {
    int i = 0;
    for (; i + W <= N; i += W) alab_vf_store(out + i, gelu_exact_vf(alab_vf_load(inp + i)));
    if (i < N) { /* tail through a padded vector, so every element sees the same math */
        float buf[W] = {0};
        for (int k = 0; k < N - i; k++) buf[k] = inp[i + k];
        alab_vf_store(buf, gelu_exact_vf(alab_vf_load(buf)));
        for (int k = 0; k < N - i; k++) out[i + k] = buf[k];
    }
}

void gelu_exact_forward_ref(float *out, const float *inp, int N) {
    for (int i = 0; i < N; i++) out[i] = (float)(0.5 * inp[i] * (1.0 + erf(inp[i] / sqrt(2.0))));
}

void swiglu_forward(float *out, const float *gate, const float *up, int N) {
    int i = 0;
    for (; i + W <= N; i += W) alab_vf_store(out + i, swiglu_vf(alab_vf_load(gate + i), alab_vf_load(up + i)));
    if (i < N) {
        float g[W] = {0}, u[W] = {0};
        for (int k = 0; k < N - i; k++) g[k] = gate[i + k], u[k] = up[i + k];
        alab_vf_store(g, swiglu_vf(alab_vf_load(g), alab_vf_load(u)));
        for (int k = 0; k < N - i; k++) out[i + k] = g[k];
    }
}

void geglu_forward(float *out, const float *gate, const float *up, int N) {
    int i = 0;
    for (; i + W <= N; i += W)
        alab_vf_store(out + i, alab_vf_mul(gelu_vf(alab_vf_load(gate + i)), alab_vf_load(up + i)));
    if (i < N) {
        float g[W] = {0}, u[W] = {0};
        for (int k = 0; k < N - i; k++) g[k] = gate[i + k], u[k] = up[i + k];
        alab_vf_store(g, alab_vf_mul(gelu_vf(alab_vf_load(g)), alab_vf_load(u)));
        for (int k = 0; k < N - i; k++) out[i + k] = g[k];
    }
}

void swiglu_forward_ref(float *out, const float *gate, const float *up, int N) {
    for (int i = 0; i < N; i++) {
        const double g = gate[i];
        out[i] = (float)(g / (1.0 + exp(-g)) * up[i]);
    }
}

/* ========================================================== kl
 * KL(p || q) of a base distribution p (V) and a changed run whose logits moved
 * by x (V) from the base's: q = p e^x / sum p e^x. For the evidence grids
 * (evidence.c: tens of thousands of them over the vocabulary), where x comes
 * straight out of the LM head as W (y_changed - y_base), never as a difference
 * of two rounded logits. With p normalised by its own sum P (so x = 0 gives 0
 * exactly) and any constants c_b, one per block b of the vocabulary,
 *   KL = log(sum_b e^{c_b} sum_{v in b} p_v e^{x_v - c_b} / P) - sum_v p_v x_v / P,
 *   sum_{v in b} p_v e^{x'} = P_b + S_x,b + S_g,b,   x' = x - c_b,
 *   S_x,b = sum p x',  S_g,b = sum p g(x'),  g(x) = e^x - 1 - x >= 0.
 * kl_block takes one block (c_b = its p-weighted mean of x, so S_x,b is
 * rounding-sized and x' small); g has no cancellation: g(x) = x^2 (1/2 + x/6 +
 * ... + x^8/10!), exact to float precision for |x| <= 1/2; a vector with a lane
 * outside takes the lanes in double with expm1. Terms are summed in float
 * within a block, blocks in double by kl_finish in block order, so the result
 * does not depend on which thread took which block: relative error about 1e-6
 * of the KL, against the double reference kl_ref. */
static ALAB_ALWAYS_INLINE alab_vf kl_g(alab_vf x) {
    alab_vf q = alab_vf_set1(1.0f / 3628800.0f);
    q = alab_vf_fma(q, x, alab_vf_set1(1.0f / 362880.0f));
    q = alab_vf_fma(q, x, alab_vf_set1(1.0f / 40320.0f));
    q = alab_vf_fma(q, x, alab_vf_set1(1.0f / 5040.0f));
    q = alab_vf_fma(q, x, alab_vf_set1(1.0f / 720.0f));
    q = alab_vf_fma(q, x, alab_vf_set1(1.0f / 120.0f));
    q = alab_vf_fma(q, x, alab_vf_set1(1.0f / 24.0f));
    q = alab_vf_fma(q, x, alab_vf_set1(1.0f / 6.0f));
    q = alab_vf_fma(q, x, alab_vf_set1(0.5f));
    return alab_vf_mul(q, alab_vf_mul(x, x));
}

void kl_block(kl_part *out, const float *p, const float *x, int n) {
    const int nv = n / W * W;
    alab_vf ap = alab_vf_zero(), apx = alab_vf_zero();
    int v = 0;
    for (; v < nv; v += W) {
        const alab_vf pv = alab_vf_load(p + v);
        ap = alab_vf_add(ap, pv);
        apx = alab_vf_fma(pv, alab_vf_load(x + v), apx);
    }
    double P = alab_vf_reduce_sum(ap), px = alab_vf_reduce_sum(apx);
    for (; v < n; v++) {
        P += p[v];
        px += (double)p[v] * x[v];
    }
    const float cf = P > 0.0 ? (float)(px / P) : 0.0f; /* any constant will do: the formula is exact for every c */
    const alab_vf cv = alab_vf_set1(cf);
    alab_vf ax = alab_vf_zero(), ag = alab_vf_zero();
    double dx = 0.0, dg = 0.0;
    for (v = 0; v < nv; v += W) {
        const alab_vf xv = alab_vf_sub(alab_vf_load(x + v), cv);
        const alab_vf pv = alab_vf_load(p + v);
        const alab_vf ab = alab_vf_max(xv, alab_vf_sub(alab_vf_zero(), xv));
        if (alab_vf_reduce_max(ab) <= 0.5f) {
            ax = alab_vf_fma(pv, xv, ax);
            ag = alab_vf_fma(pv, kl_g(xv), ag);
        } else {
            for (int k = 0; k < W; k++) {
                const double xd = (double)x[v + k] - cf;
                dx += (double)p[v + k] * xd;
                dg += (double)p[v + k] * (expm1(xd) - xd);
            }
        }
    }
    for (; v < n; v++) {
        const double xd = (double)x[v] - cf;
        dx += (double)p[v] * xd;
        dg += (double)p[v] * (expm1(xd) - xd);
    }
    out->c = cf;
    out->P = P;
    out->sx = (double)alab_vf_reduce_sum(ax) + dx;
    out->sg = (double)alab_vf_reduce_sum(ag) + dg;
}

double kl_finish(const kl_part *b, int nb) {
    double P = 0.0, X = 0.0, M = 0.0;
    for (int i = 0; i < nb; i++) {
        P += b[i].P;
        X += b[i].c * b[i].P + b[i].sx;
        if (b[i].c > M) M = b[i].c;
    }
    if (!(P > 0.0)) return 0.0;
    double k;
    if (M <= 1.0) { /* log1p of sum (e^c - 1) P_b + e^c (S_x + S_g), over P: no cancellation for small moves */
        double D = 0.0;
        for (int i = 0; i < nb; i++) D += expm1(b[i].c) * b[i].P + exp(b[i].c) * (b[i].sx + b[i].sg);
        k = log1p(D / P) - X / P;
    } else { /* large moves: shifted by the largest c against overflow */
        double S = 0.0;
        for (int i = 0; i < nb; i++) S += exp(b[i].c - M) * (b[i].P + b[i].sx + b[i].sg);
        k = M + log(S / P) - X / P;
    }
    return k > 0.0 ? k : 0.0;
}

double kl_ref(const float *p, const float *x, int V) {
    /* in double: p normalised, log sum p e^(x - max) + max - sum p x */
    double P = 0.0, mx = -INFINITY;
    for (int v = 0; v < V; v++) {
        P += p[v];
        if (p[v] > 0.0f && x[v] > mx) mx = x[v];
    }
    if (!(P > 0.0)) return 0.0;
    double s = 0.0, sx = 0.0;
    for (int v = 0; v < V; v++) {
        s += (double)p[v] / P * exp((double)x[v] - mx);
        sx += (double)p[v] / P * x[v];
    }
    const double k = log(s) + mx - sx;
    return k > 0.0 ? k : 0.0;
}
