/* ops.h — the kernels of the forward pass. Each fast kernel has a plain
 * reference twin (*_ref) that the tests compare it with on odd sizes.
 * Shapes: T rows (tokens), C input channels, OC output channels.
 * Weights follow GPT-2's Conv1D layout: w is (C, OC), row-major. */
#ifndef ALAB_OPS_H
#define ALAB_OPS_H

#include <stddef.h>
#include <stdint.h>

/* out (T,OC) = inp (T,C) @ w (C,OC) + bias (OC); bias may be NULL. */
void matmul_forward(float *out, const float *inp, const float *w, const float *bias,
                    int T, int C, int OC);
void matmul_forward_ref(float *out, const float *inp, const float *w, const float *bias,
                        int T, int C, int OC);

/* The same with explicit row strides: out rows ldo floats apart, inp rows ldi, w rows ldw
 * (matmul_forward is ldo = OC, ldi = C, ldw = OC). Used on views into larger buffers. */
void matmul_forward_ld(float *out, int ldo, const float *inp, int ldi, const float *w, int ldw,
                       const float *bias, int T, int C, int OC);
void matmul_forward_ld_ref(float *out, int ldo, const float *inp, int ldi, const float *w, int ldw,
                           const float *bias, int T, int C, int OC);

/* Packed weights: matmul_pack_weights writes w (C,OC) to dst (C*OC floats, dst != w) in the
 * panel order the kernel reads; the layout depends on the build's SIMD width, so pack in the
 * same binary that multiplies. matmul_packed_forward = matmul_forward on the packed copy. */
void matmul_pack_weights(float *dst, const float *w, int C, int OC);
/* Its inverse: w (C, OC) from the packed copy. */
void matmul_unpack_weights(float *w, const float *wp, int C, int OC);
/* The same packed copy from wt (OC, C), the transpose of w. */
void matmul_pack_weights_t(float *dst, const float *wt, int C, int OC);
/* The same result in place in w, through scratch of matmul_pack_scratch_floats(OC) floats
 * (one block of rows: ALAB_MM_KC x OC), so packing a model never holds a second copy of a matrix. */
size_t matmul_pack_scratch_floats(int OC);
void matmul_pack_weights_inplace(float *w, int C, int OC, float *scratch);
void matmul_packed_forward(float *out, const float *inp, const float *wp, const float *bias,
                           int T, int C, int OC);
void matmul_packed_forward_ref(float *out, const float *inp, const float *wp, const float *bias,
                               int T, int C, int OC);
/* Part `part` of `nparts` of matmul_packed_forward: a contiguous range of its
 * output columns (the full strips split evenly, the leftover columns with the
 * last part). Running every part, in any order or at once on different
 * threads, writes exactly matmul_packed_forward's out, bit for bit. */
void matmul_packed_forward_part(float *out, const float *inp, const float *wp, const float *bias,
                                int T, int C, int OC, int part, int nparts);
/* The same, blocked as a product of T_plan rows would be: a row's value then
 * depends only on its own position in its group of 4 rows, so the rows of a
 * run over a window of rows (aligned to 4) equal those of the full run bit for
 * bit (forward.c). With T_plan = T it is matmul_packed_forward_part. */
void matmul_packed_forward_plan(float *out, const float *inp, const float *wp, const float *bias,
                                int T, int C, int OC, int part, int nparts, int T_plan);
/* Columns of one strip of the packed layout (MM_NR): evidence.c takes blocks of the LM head in multiples of it. */
int matmul_packed_strip(void);

/* out (T,OC) = inp (T,C) @ w^T where w is (OC, C) (the tied LM head: w = wte). */
void matmul_nt_forward(float *out, const float *inp, const float *w, int T, int C, int OC);
void matmul_nt_forward_ref(float *out, const float *inp, const float *w, int T, int C, int OC);
/* Part `part` of `nparts` of matmul_nt_forward's output columns (the same
 * contract as matmul_packed_forward_part). */
void matmul_nt_forward_part(float *out, const float *inp, const float *w, int T, int C, int OC,
                            int part, int nparts);

/* KL(p || q) in nats of a base distribution p (V) and q = p e^x / sum p e^x, x (V) the change of the logits:
 * kl_block the share of one block of the vocabulary (SIMD, float sums), kl_finish the blocks' shares in
 * double (relative error about 1e-6; 0 exactly when x is 0), kl_ref the double twin of the whole. */
typedef struct {
    double c, P, sx, sg;
} kl_part;
void kl_block(kl_part *out, const float *p, const float *x, int n);
double kl_finish(const kl_part *parts, int nparts);
double kl_ref(const float *p, const float *x, int V);

/* out (T,C) = (inp - mean) / sqrt(var + eps) * w + b, per row. out may equal inp. */
void layernorm_forward(float *out, const float *inp, const float *w, const float *b,
                       int T, int C, float eps);
void layernorm_forward_ref(float *out, const float *inp, const float *w, const float *b,
                           int T, int C, float eps);

/* GPT-2's gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). out may equal inp. */
void gelu_forward(float *out, const float *inp, int N);
void gelu_forward_ref(float *out, const float *inp, int N);

/* RMSNorm (Llama, Qwen): out (T,C) = inp / sqrt(mean(inp^2) + eps) * w, per row. out may equal inp. */
void rmsnorm_forward(float *out, const float *inp, const float *w, int T, int C, float eps);
void rmsnorm_forward_ref(float *out, const float *inp, const float *w, int T, int C, float eps);

/* Exact GELU (GPT-NeoX's "gelu"): 0.5 x (1 + erf(x / sqrt 2)). out may equal inp. */
void gelu_exact_forward(float *out, const float *inp, int N);
void gelu_exact_forward_ref(float *out, const float *inp, int N);

/* SwiGLU's product: out = silu(gate) * up = gate / (1 + exp(-gate)) * up. out may equal gate or up. */
void swiglu_forward(float *out, const float *gate, const float *up, int N);
void swiglu_forward_ref(float *out, const float *gate, const float *up, int N);
/* GeGLU (Gemma): out = gelu_new(gate) * up, gelu_new as gelu_forward (= PyTorch's gelu "tanh"). out may equal gate or up. */
void geglu_forward(float *out, const float *gate, const float *up, int N);

/* Numerically stable softmax of one row of N; entries equal to -INFINITY get 0.
 * out may equal inp. A row that is all -INFINITY becomes all zeros. */
void softmax_forward(float *out, const float *inp, int N);
void softmax_forward_ref(float *out, const float *inp, int N);

/* sum a[i] b[i] */
float dot_f32(const float *a, const float *b, int n);
float dot_f32_ref(const float *a, const float *b, int n);
/* y += alpha x */
void axpy_f32(float *y, float alpha, const float *x, int n);
void axpy_f32_ref(float *y, float alpha, const float *x, int n);
/* Index of the first inf or NaN in x (n if there is none): the weight check at load. */
size_t first_nonfinite_f32(const float *x, size_t n);
size_t first_nonfinite_f32_ref(const float *x, size_t n);
size_t first_nonfinite_16(const uint16_t *h, size_t n, int bf16);
size_t first_nonfinite_16_ref(const uint16_t *h, size_t n, int bf16);
/* Index of the first largest of x[0..n) (0 for n <= 0); NaN is never the
 * largest, except at index 0 (as the reference's first comparison). */
int argmax_f32(const float *x, int n);
int argmax_f32_ref(const float *x, int n);
/* ids[0..min(k,n)) = the indices of the k largest of x[0..n), largest first;
 * equal values by the lower index first; NaN ranks after every number.
 * topk_f32 keeps a heap of k: O(n log k) time, no memory beyond ids. The
 * twin is the insertion sort it replaced (O(n k)). */
void topk_f32(int *ids, const float *x, int n, int k);
void topk_f32_ref(int *ids, const float *x, int n, int k);
/* out = a + b (residual add). out may equal a. */
void add_f32(float *out, const float *a, const float *b, int n);

#endif
