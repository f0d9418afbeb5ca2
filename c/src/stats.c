/* stats.c — rank statistics that compare a reading of attention with an
 * interventional effect (docs/evidence.md): Spearman's rho, Kendall's tau-b
 * (Knight's O(n log n) algorithm and its O(n^2) twin) and the top-k overlap;
 * and the seeded resampling over a set of inputs: the splitmix64 generator,
 * the percentile bootstrap of a mean and the mean per-input correlation with
 * its within-group permutation null (alab_corr_dataset); and what a reviewer
 * asks of a set's numbers: the cluster bootstrap of a mean, paired
 * differences with a cluster sign-flip test, Holm's correction, the partial
 * Spearman correlation and type-7 quantiles. Pure functions on plain arrays,
 * no model. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int check_pair(const double *a, const double *b, int n, const char *where) {
    if (!a || !b) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    if (n < 0 || n > ALAB_EVIDENCE_MAX_N)
        return alab_fail(ALAB_ELIMIT, "%s: n = %d outside [0, %d]", where, n, ALAB_EVIDENCE_MAX_N);
    for (int i = 0; i < n; i++)
        if (!isfinite(a[i]) || !isfinite(b[i]))
            return alab_fail(ALAB_ENAN, "%s: value %d is not finite", where, i);
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Ranks and Spearman                                                         */
/* ------------------------------------------------------------------------ */

typedef struct {
    double key, key2;
    int i;
} keyed;

static int cmp_keyed(const void *pa, const void *pb) {
    const keyed *a = pa, *b = pb;
    if (a->key < b->key) return -1;
    if (a->key > b->key) return 1;
    if (a->key2 < b->key2) return -1;
    if (a->key2 > b->key2) return 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* r (n) = ranks of x, 0-based, ties sharing their average rank; k is
 * scratch for n values (the resampling loops rank many times and allocate
 * once). */
static void ranks_into(double *r, const double *x, int n, keyed *k) {
    for (int i = 0; i < n; i++) k[i] = (keyed){x[i], 0.0, i};
    qsort(k, (size_t)n, sizeof *k, cmp_keyed);
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && k[j + 1].key == k[i].key) j++;
        for (int t = i; t <= j; t++) r[k[t].i] = 0.5 * (i + j);
        i = j + 1;
    }
}

static int average_ranks(double *r, const double *x, int n) {
    keyed *k = malloc((size_t)(n ? n : 1) * sizeof *k);
    if (!k) return alab_fail(ALAB_ENOMEM, "ranks: no memory for %d values", n);
    ranks_into(r, x, n, k);
    free(k);
    return ALAB_OK;
}

/* The Pearson correlation of two rank vectors (each a permutation of the
 * average ranks of n values, so both have mean (n - 1) / 2); NaN when a side
 * is constant (every rank then equals that mean exactly, and a sum of
 * squares is 0). */
static double spearman_of_ranks(const double *ra, const double *rb, int n) {
    const double mean = 0.5 * (n - 1);
    double sab = 0.0, saa = 0.0, sbb = 0.0;
    for (int i = 0; i < n; i++) {
        const double x = ra[i] - mean, y = rb[i] - mean;
        sab += x * y;
        saa += x * x;
        sbb += y * y;
    }
    return saa > 0.0 && sbb > 0.0 ? sab / sqrt(saa * sbb) : NAN;
}

int alab_spearman(double *rho, const double *a, const double *b, int n) {
    if (!rho) return alab_fail(ALAB_EINVAL, "alab_spearman: NULL argument");
    *rho = NAN;
    int rc = check_pair(a, b, n, "alab_spearman");
    if (rc != ALAB_OK) return rc;
    if (n < 2) return ALAB_OK;
    double *ra = malloc(2 * (size_t)n * sizeof *ra);
    if (!ra) return alab_fail(ALAB_ENOMEM, "alab_spearman: no memory for %d values", n);
    double *rb = ra + n;
    if ((rc = average_ranks(ra, a, n)) != ALAB_OK || (rc = average_ranks(rb, b, n)) != ALAB_OK) {
        free(ra);
        return rc;
    }
    *rho = spearman_of_ranks(ra, rb, n);
    free(ra);
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Kendall's tau-b: Knight's O(n log n) algorithm and its O(n^2) twin          */
/* ------------------------------------------------------------------------ */

static double tau_b(double n0, double n1, double n2, double n3, double discordant) {
    const double den = sqrt((n0 - n1) * (n0 - n2));
    return den > 0.0 ? (n0 - n1 - n2 + n3 - 2.0 * discordant) / den : NAN;
}

int alab_kendall_tau_b_ref(double *tau, const double *a, const double *b, int n) {
    if (!tau) return alab_fail(ALAB_EINVAL, "alab_kendall_tau_b_ref: NULL argument");
    *tau = NAN;
    int rc = check_pair(a, b, n, "alab_kendall_tau_b_ref");
    if (rc != ALAB_OK) return rc;
    if (n < 2) return ALAB_OK;
    double n1 = 0, n2 = 0, n3 = 0, disc = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            const int ta = a[i] == a[j], tb = b[i] == b[j];
            n1 += ta;
            n2 += tb;
            n3 += ta && tb;
            if (!ta && !tb && ((a[i] < a[j]) != (b[i] < b[j]))) disc += 1;
        }
    *tau = tau_b(0.5 * n * (n - 1.0), n1, n2, n3, disc);
    return ALAB_OK;
}

/* Sort v[0..n) ascending with a merge sort; returns the number of inversions
 * (pairs i < j with v[i] > v[j]). tmp has room for n values. */
static double merge_count(double *v, double *tmp, int n) {
    if (n < 2) return 0.0;
    const int h = n / 2;
    double swaps = merge_count(v, tmp, h) + merge_count(v + h, tmp, n - h);
    int i = 0, j = h, k = 0;
    while (i < h && j < n) {
        if (v[j] < v[i]) {
            swaps += h - i;
            tmp[k++] = v[j++];
        } else {
            tmp[k++] = v[i++];
        }
    }
    while (i < h) tmp[k++] = v[i++];
    while (j < n) tmp[k++] = v[j++];
    memcpy(v, tmp, (size_t)n * sizeof *v);
    return swaps;
}

static double tied_pairs_sorted(const double *v, int n) {
    double s = 0.0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && v[j + 1] == v[i]) j++;
        const double t = j - i + 1;
        s += 0.5 * t * (t - 1);
        i = j + 1;
    }
    return s;
}

/* Knight's tau-b of a and b (n >= 2) with caller scratch: k for n values, v
 * for 2n doubles. */
static double kendall_into(const double *a, const double *b, int n, keyed *k, double *v) {
    for (int i = 0; i < n; i++) k[i] = (keyed){a[i], b[i], i};
    qsort(k, (size_t)n, sizeof *k, cmp_keyed); /* by a, then b */
    double n1 = 0.0, n3 = 0.0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && k[j + 1].key == k[i].key) j++;
        const double t = j - i + 1;
        n1 += 0.5 * t * (t - 1);
        for (int s = i; s <= j;) { /* joint ties inside the a-tie group (b sorted) */
            int e = s;
            while (e + 1 <= j && k[e + 1].key2 == k[s].key2) e++;
            const double u = e - s + 1;
            n3 += 0.5 * u * (u - 1);
            s = e + 1;
        }
        i = j + 1;
    }
    for (int i = 0; i < n; i++) v[i] = k[i].key2;
    /* b in a-order: an inversion is a pair discordant in (a, b) with a strictly
     * ordered (inside an a-tie group b is already ascending, so no inversion) */
    const double disc = merge_count(v, v + n, n);
    const double n2 = tied_pairs_sorted(v, n);
    return tau_b(0.5 * n * (n - 1.0), n1, n2, n3, disc);
}

int alab_kendall_tau_b(double *tau, const double *a, const double *b, int n) {
    if (!tau) return alab_fail(ALAB_EINVAL, "alab_kendall_tau_b: NULL argument");
    *tau = NAN;
    int rc = check_pair(a, b, n, "alab_kendall_tau_b");
    if (rc != ALAB_OK) return rc;
    if (n < 2) return ALAB_OK;
    keyed *k = malloc((size_t)n * sizeof *k);
    double *v = malloc(2 * (size_t)n * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return alab_fail(ALAB_ENOMEM, "alab_kendall_tau_b: no memory for %d values", n);
    }
    *tau = kendall_into(a, b, n, k, v);
    free(k);
    free(v);
    return ALAB_OK;
}

int alab_top_k_overlap(double *share, const double *a, const double *b, int n, int k) {
    if (!share) return alab_fail(ALAB_EINVAL, "alab_top_k_overlap: NULL argument");
    *share = NAN;
    int rc = check_pair(a, b, n, "alab_top_k_overlap");
    if (rc != ALAB_OK) return rc;
    if (k < 1) return alab_fail(ALAB_ERANGE, "alab_top_k_overlap: k = %d < 1", k);
    if (k > n) k = n;
    if (k == 0) return ALAB_OK;
    keyed *ka = malloc(2 * (size_t)n * sizeof *ka);
    unsigned char *in = calloc((size_t)n, 1);
    if (!ka || !in) {
        free(ka);
        free(in);
        return alab_fail(ALAB_ENOMEM, "alab_top_k_overlap: no memory for %d values", n);
    }
    keyed *kb = ka + n;
    for (int i = 0; i < n; i++) { /* descending value, ties: lower index first */
        ka[i] = (keyed){-a[i], 0.0, i};
        kb[i] = (keyed){-b[i], 0.0, i};
    }
    qsort(ka, (size_t)n, sizeof *ka, cmp_keyed);
    qsort(kb, (size_t)n, sizeof *kb, cmp_keyed);
    for (int i = 0; i < k; i++) in[ka[i].i] = 1;
    int both = 0;
    for (int i = 0; i < k; i++) both += in[kb[i].i];
    free(ka);
    free(in);
    *share = (double)both / k;
    return ALAB_OK;
}


/* ------------------------------------------------------------------------ */
/* The seeded generator: splitmix64                                           */
/* ------------------------------------------------------------------------ */

/* splitmix64 rather than the xorshift64* of hopfield.c: every state is a
 * valid seed (0 included), it is a few lines in any language, and a reference
 * written from the header draws the same numbers. */
void alab_rng_seed(alab_rng *r, uint32_t seed) {
    if (r) r->state = seed;
}

uint64_t alab_rng_next(alab_rng *r) {
    uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

uint32_t alab_rng_below(alab_rng *r, uint32_t n) {
    if (n == 0) return 0; /* outside the contract: no draw, rather than a division by zero */
    /* Rejection above the largest multiple of n that fits in 32 bits, so
     * every residue is equally likely (a plain r mod n favours the small
     * ones by up to 1 / 2^32 * n, which a 3 * 2^30 range makes 2:1). The
     * bound needs 33 bits for n = 1 (2^32: nothing rejected, one draw). */
    const uint64_t lim = (UINT64_C(1) << 32) - (UINT64_C(1) << 32) % n;
    uint64_t x;
    do x = alab_rng_next(r) >> 32;
    while (x >= lim);
    return (uint32_t)(x % n);
}

/* ------------------------------------------------------------------------ */
/* Bootstrap of a mean                                                        */
/* ------------------------------------------------------------------------ */

#define ALAB_RESAMPLE_MAX 1000000

static int cmp_double(const void *pa, const void *pb) {
    const double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* The q-quantile of the ascending s (N >= 1) by linear interpolation between
 * order statistics (Hyndman & Fan's type 7, numpy's default). */
static double quantile7(const double *s, int N, double q) {
    const double h = (N - 1) * q;
    const double f = floor(h);
    const int i = (int)f;
    if (i >= N - 1) return s[N - 1];
    if (i < 0) return s[0];
    return s[i] + (h - f) * (s[i + 1] - s[i]);
}

/* Mean of the non-NaN values of x (NaN when there are none): one left-to-right
 * sum, so a permutation that reproduces the observed values gives the
 * observed mean bit for bit (the p-values count ties). */
static double mean_defined(const double *x, int n, int *count) {
    double sum = 0.0;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) {
            sum += x[i];
            m++;
        }
    if (count) *count = m;
    return m ? sum / m : NAN;
}

static int check_resamples(int n, const char *what, const char *where) {
    if (n < 0 || n > ALAB_RESAMPLE_MAX)
        return alab_fail(ALAB_ERANGE, "%s: %s = %d outside [0, %d]", where, what, n, ALAB_RESAMPLE_MAX);
    return ALAB_OK;
}

static int check_level(double level, const char *where) {
    if (!(level > 0.0 && level < 1.0)) return alab_fail(ALAB_ERANGE, "%s: level %g outside (0, 1)", where, level);
    return ALAB_OK;
}

int alab_bootstrap_mean(double *mean, double *lo, double *hi, const double *x, int n, int n_boot, double level,
                        uint32_t seed) {
    static const char *const where = "alab_bootstrap_mean";
    if (!mean || !lo || !hi) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    *mean = *lo = *hi = NAN;
    if (n < 0 || n > ALAB_EVIDENCE_MAX_N)
        return alab_fail(ALAB_ELIMIT, "%s: n = %d outside [0, %d]", where, n, ALAB_EVIDENCE_MAX_N);
    if (!x && n > 0) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    if (n_boot < 1 || n_boot > ALAB_RESAMPLE_MAX)
        return alab_fail(ALAB_ERANGE, "%s: n_boot = %d outside [1, %d]", where, n_boot, ALAB_RESAMPLE_MAX);
    int rc = check_level(level, where);
    if (rc != ALAB_OK) return rc;
    for (int i = 0; i < n; i++)
        if (isinf(x[i])) return alab_fail(ALAB_ENAN, "%s: value %d is infinite", where, i);
    int m = 0;
    const double mu = mean_defined(x, n, &m);
    if (m == 0) return ALAB_OK;
    if (m == 1) { /* every resample is the one value: no draws needed */
        *mean = *lo = *hi = mu;
        return ALAB_OK;
    }
    double *v = malloc(((size_t)m + (size_t)n_boot) * sizeof *v);
    if (!v) return alab_fail(ALAB_ENOMEM, "%s: no memory for %d values and %d resamples", where, m, n_boot);
    double *means = v + m;
    for (int i = 0, t = 0; i < n; i++)
        if (!isnan(x[i])) v[t++] = x[i];
    alab_rng rng;
    alab_rng_seed(&rng, seed);
    for (int b = 0; b < n_boot; b++) {
        double sum = 0.0;
        for (int t = 0; t < m; t++) sum += v[alab_rng_below(&rng, (uint32_t)m)];
        means[b] = sum / m;
    }
    qsort(means, (size_t)n_boot, sizeof *means, cmp_double);
    *mean = mu;
    *lo = quantile7(means, n_boot, 0.5 * (1.0 - level));
    *hi = quantile7(means, n_boot, 0.5 * (1.0 + level));
    free(v);
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* A correlation over a set of inputs, with its permutation null             */
/* ------------------------------------------------------------------------ */

static int check_spec(const alab_corr_spec *sp) {
    static const char *const where = "alab_corr_dataset";
    if (sp->n_inputs < 1 || sp->n_inputs > ALAB_EVIDENCE_MAX_N)
        return alab_fail(sp->n_inputs < 1 ? ALAB_ERANGE : ALAB_ELIMIT, "%s: n_inputs = %d outside [1, %d]", where,
                         sp->n_inputs, ALAB_EVIDENCE_MAX_N);
    if (!sp->offset || !sp->reading || !sp->effect) return alab_fail(ALAB_EINVAL, "%s: NULL array in the spec", where);
    if (sp->stat != ALAB_CORR_SPEARMAN && sp->stat != ALAB_CORR_KENDALL)
        return alab_fail(ALAB_EINVAL, "%s: stat = %d is neither ALAB_CORR_SPEARMAN nor ALAB_CORR_KENDALL", where,
                         sp->stat);
    if (sp->offset[0] != 0) return alab_fail(ALAB_EINVAL, "%s: offset[0] = %d, not 0", where, sp->offset[0]);
    for (int k = 0; k < sp->n_inputs; k++) {
        if (sp->offset[k + 1] < sp->offset[k])
            return alab_fail(ALAB_EINVAL, "%s: offset[%d] = %d < offset[%d] = %d", where, k + 1, sp->offset[k + 1], k,
                             sp->offset[k]);
        if (sp->offset[k + 1] > ALAB_EVIDENCE_MAX_N)
            return alab_fail(ALAB_ELIMIT, "%s: %d points, more than %d", where, sp->offset[k + 1],
                             ALAB_EVIDENCE_MAX_N);
    }
    if (sp->min_points < 2) return alab_fail(ALAB_ERANGE, "%s: min_points = %d < 2", where, sp->min_points);
    int rc;
    if ((rc = check_resamples(sp->n_boot, "n_boot", where)) != ALAB_OK) return rc;
    if ((rc = check_resamples(sp->n_perm, "n_perm", where)) != ALAB_OK) return rc;
    if ((rc = check_level(sp->level, where)) != ALAB_OK) return rc;
    if (!(sp->eps >= 0.0) || isinf(sp->eps)) return alab_fail(ALAB_ERANGE, "%s: eps = %g is not a finite value >= 0", where, sp->eps);
    const int N = sp->offset[sp->n_inputs];
    for (int i = 0; i < N; i++)
        if (!isfinite(sp->reading[i]) || !isfinite(sp->effect[i]))
            return alab_fail(ALAB_ENAN, "%s: point %d has a non-finite %s", where, i,
                             isfinite(sp->reading[i]) ? "effect" : "reading");
    return ALAB_OK;
}

/* ord[o0 .. o1) = input k's points grouped: the groups in order of first
 * appearance, each group's points in point order; start[p] = 1 where a group
 * begins. With no groups it is the identity and one group. key is scratch
 * for 2 (o1 - o0) entries. */
static void group_points(int *ord, unsigned char *start, const int *group, int o0, int o1, keyed *key) {
    const int n = o1 - o0;
    if (!group) {
        for (int t = 0; t < n; t++) {
            ord[o0 + t] = o0 + t;
            start[o0 + t] = t == 0;
        }
        return;
    }
    /* by (group, point): each group a run whose first entry is its first point */
    for (int t = 0; t < n; t++) key[t] = (keyed){(double)group[o0 + t], (double)(o0 + t), o0 + t};
    qsort(key, (size_t)n, sizeof *key, cmp_keyed);
    keyed *run = key + n; /* (first point, start in key, -) of each run, then sorted by first point */
    int n_run = 0;
    for (int t = 0; t < n;) {
        int e = t;
        while (e + 1 < n && key[e + 1].key == key[t].key) e++;
        run[n_run++] = (keyed){key[t].key2, (double)(e - t + 1), t};
        t = e + 1;
    }
    qsort(run, (size_t)n_run, sizeof *run, cmp_keyed);
    int p = o0;
    for (int r = 0; r < n_run; r++) {
        const int len = (int)run[r].key2;
        for (int t = 0; t < len; t++, p++) {
            ord[p] = key[run[r].i + t].i;
            start[p] = t == 0;
        }
    }
}

static int cmp_int(const void *pa, const void *pb) {
    const int a = *(const int *)pa, b = *(const int *)pb;
    return (a > b) - (a < b);
}

/* Kendall's tau-b of one input whose effects stay put while its readings are
 * permuted: Knight's algorithm with the roles swapped (tau-b is symmetric in
 * a and b, and its counts are integers, so the value is the same bits as
 * kendall_into's), with the readings replaced by their dense ranks 0..n-1
 * (equal readings, equal rank: the order and the ties are all tau-b sees, and
 * a permutation of the readings is the same permutation of their ranks). The
 * points are sorted by effect once (bord; btie[t] = 1 where a run of tied
 * effects begins). Each call gathers the ranks in that order, sorts them
 * inside each run of tied effects (joint ties n3 counted there), and counts
 * the discordant pairs — a later point with a strictly smaller rank — with a
 * Fenwick tree: no sort of the whole input per permutation, and no
 * data-dependent branch in the hot loop (a merge sort there, mispredicting
 * half its comparisons, made the null about three times slower). n1, the pairs tied in the reading, does not change under a
 * permutation and is passed in. vi has room for n ints, bit for n + 1. */
static double kendall_by_effect(const double *rank, const int *bord, const unsigned char *btie, int n, double n1,
                                int *vi, int *bit) {
    if (n < 2) return NAN;
    double n2 = 0.0, n3 = 0.0;
    for (int t = 0; t < n; t++) vi[t] = (int)rank[bord[t]];
    for (int s = 0; s < n;) {
        int e = s + 1;
        while (e < n && !btie[e]) e++;
        if (e - s > 1) {
            const double len = e - s;
            n2 += 0.5 * len * (len - 1);
            if (e - s <= 16) { /* insertion sort: most runs of tied effects are short */
                for (int i = s + 1; i < e; i++) {
                    const int x = vi[i];
                    int j = i - 1;
                    for (; j >= s && vi[j] > x; j--) vi[j + 1] = vi[j];
                    vi[j + 1] = x;
                }
            } else {
                qsort(vi + s, (size_t)(e - s), sizeof *vi, cmp_int);
            }
            for (int i = s; i < e;) {
                int j = i;
                while (j + 1 < e && vi[j + 1] == vi[i]) j++;
                const double u = j - i + 1;
                n3 += 0.5 * u * (u - 1);
                i = j + 1;
            }
        }
        s = e;
    }
    /* bit[1..n]: how many of the points seen so far have each rank */
    memset(bit, 0, (size_t)(n + 1) * sizeof *bit);
    long long disc = 0;
    for (int t = 0; t < n; t++) {
        int at_most = 0; /* earlier points with rank <= vi[t] */
        for (int i = vi[t] + 1; i > 0; i -= i & -i) at_most += bit[i];
        disc += t - at_most;
        for (int i = vi[t] + 1; i <= n; i += i & -i) bit[i]++;
    }
    return tau_b(0.5 * n * (n - 1.0), n1, n2, n3, (double)disc);
}

typedef struct {
    int stat;
    const int *bord;            /* Kendall: each input's points by effect (global indices) */
    const unsigned char *btie;  /* Kendall: where a run of tied effects begins */
    const double *n1;           /* Kendall: each input's pairs tied in the reading */
    int *vi, *bit;              /* Kendall scratch: the largest input, and one more */
} corr_ctx;

/* The correlation of input k, points [o0, o0 + n). Spearman: a and b are the
 * rank vectors (ranking once, then permuting ranks instead of readings gives
 * the same ranks: a reading's rank depends only on the multiset of the
 * input's readings, which a permutation keeps), so a permutation costs no
 * sort. Kendall: a holds the dense ranks of the readings, the effects enter
 * through bord/btie. */
static double corr_of(const corr_ctx *c, const double *a, const double *b, int k, int o0, int n) {
    if (c->stat == ALAB_CORR_SPEARMAN) return spearman_of_ranks(a + o0, b + o0, n);
    return kendall_by_effect(a, c->bord + o0, c->btie + o0, n, c->n1[k], c->vi, c->bit);
}

int alab_corr_dataset(alab_corr_summary *s, double *per_input, const alab_corr_spec *spec) {
    static const char *const where = "alab_corr_dataset";
    if (!s || !spec) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    *s = (alab_corr_summary){NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0, 0, 0};
    int rc = check_spec(spec);
    if (rc != ALAB_OK) return rc;
    const int K = spec->n_inputs, N = spec->offset[K];
    const int *off = spec->offset;
    const int spearman = spec->stat == ALAB_CORR_SPEARMAN;
    int max_n = 1;
    for (int k = 0; k < K; k++)
        if (off[k + 1] - off[k] > max_n) max_n = off[k + 1] - off[k];

    /* Everything the call needs, allocated once: the loops below only index it. */
    const size_t nN = (size_t)(N ? N : 1);
    double *per = malloc((size_t)K * sizeof *per);
    double *eff = malloc(nN * sizeof *eff);     /* floored effects */
    double *ra = malloc(nN * sizeof *ra);       /* Spearman: reading ranks; Kendall: dense ranks */
    double *rb = malloc(nN * sizeof *rb);       /* Spearman: effect ranks */
    double *work = malloc(nN * sizeof *work);   /* one permutation's ra */
    double *n1 = malloc((size_t)K * sizeof *n1);
    int *vi = malloc((size_t)max_n * sizeof *vi), *bit = malloc(((size_t)max_n + 1) * sizeof *bit);
    double *nulls = malloc((size_t)(spec->n_perm ? spec->n_perm : 1) * 2 * sizeof *nulls);
    int *ord = malloc(nN * sizeof *ord);
    unsigned char *start = malloc(nN);
    int *bord = malloc(nN * sizeof *bord);
    unsigned char *btie = malloc(nN);
    keyed *key = malloc(2 * (size_t)max_n * sizeof *key);
    if (!per || !eff || !ra || !rb || !work || !n1 || !vi || !bit || !nulls || !ord || !start || !bord || !btie || !key) {
        rc = alab_fail(ALAB_ENOMEM, "%s: no memory for %d points", where, N);
        goto done;
    }
    const corr_ctx ctx = {spec->stat, bord, btie, n1, vi, bit};

    int above = 0;
    for (int i = 0; i < N; i++) {
        const double e = spec->effect[i];
        /* below the floor an effect is indistinguishable from rounding: a tie at 0 */
        eff[i] = fabs(e) < spec->eps ? 0.0 : e;
        above += fabs(e) >= spec->eps;
    }

    /* The observed correlation of each input, and what its permutations need. */
    for (int k = 0; k < K; k++) {
        const int o0 = off[k], n = off[k + 1] - o0;
        group_points(ord, start, spec->group, o0, off[k + 1], key);
        if (spearman) {
            ranks_into(ra + o0, spec->reading + o0, n, key);
            ranks_into(rb + o0, eff + o0, n, key);
        } else {
            for (int t = 0; t < n; t++) key[t] = (keyed){spec->reading[o0 + t], 0.0, o0 + t};
            qsort(key, (size_t)n, sizeof *key, cmp_keyed);
            n1[k] = 0.0;
            for (int t = 0, d = 0; t < n; d++) {
                int e = t;
                while (e + 1 < n && key[e + 1].key == key[t].key) e++;
                for (int u = t; u <= e; u++) ra[key[u].i] = d;
                const double len = e - t + 1;
                n1[k] += 0.5 * len * (len - 1);
                t = e + 1;
            }
            for (int t = 0; t < n; t++) key[t] = (keyed){eff[o0 + t], 0.0, o0 + t};
            qsort(key, (size_t)n, sizeof *key, cmp_keyed);
            for (int t = 0; t < n; t++) {
                bord[o0 + t] = key[t].i;
                btie[o0 + t] = t == 0 || key[t].key != key[t - 1].key;
            }
        }
        per[k] = n >= spec->min_points ? corr_of(&ctx, ra, rb, k, o0, n) : NAN;
    }
    int n_def = 0;
    const double mean = mean_defined(per, K, &n_def);
    s->n_defined = n_def;
    s->n_points = N;
    s->n_above_floor = above;

    if (spec->n_boot > 0 && n_def > 0) {
        if ((rc = alab_bootstrap_mean(&s->mean, &s->lo, &s->hi, per, K, spec->n_boot, spec->level, spec->seed)) !=
            ALAB_OK)
            goto done;
    }
    s->mean = mean;

    /* The null: readings shuffled within their groups, effects fixed. Every
     * input draws its shuffles, defined or not, so the draws do not depend on
     * min_points; each permutation starts again from the observed order. */
    if (spec->n_perm > 0 && n_def > 0) {
        alab_rng rng;
        alab_rng_seed(&rng, spec->seed + 1u);
        const int P = spec->n_perm;
        /* Readings equal within every group (uniform attention): no shuffle changes a rank, so every permutation
           gives the first one's value, bit for bit; it is computed once and copied. */
        int constant = 1;
        for (int g = 0; g < N && constant;) {
            int e = g + 1;
            while (e < N && !start[e]) e++;
            for (int x = g + 1; x < e; x++)
                if (spec->reading[ord[x]] != spec->reading[ord[g]]) constant = 0;
            g = e;
        }
        for (int b = 0; b < P; b++) {
            if (constant && b > 0) {
                nulls[b] = nulls[0];
                continue;
            }
            memcpy(work, ra, (size_t)N * sizeof *work);
            double sum = 0.0;
            int cnt = 0;
            for (int k = 0; k < K; k++) {
                const int o0 = off[k], o1 = off[k + 1];
                for (int g = o0; g < o1;) {
                    int e = g + 1;
                    while (e < o1 && !start[e]) e++;
                    const int *pt = ord + g; /* the group's points, in point order */
                    for (int i = e - g - 1; i >= 1; i--) {
                        const int j = (int)alab_rng_below(&rng, (uint32_t)(i + 1));
                        const double t = work[pt[i]];
                        work[pt[i]] = work[pt[j]];
                        work[pt[j]] = t;
                    }
                    g = e;
                }
                if (isnan(per[k])) continue;
                const double c = corr_of(&ctx, work, rb, k, o0, o1 - o0);
                if (!isnan(c)) {
                    sum += c;
                    cnt++;
                }
            }
            nulls[b] = cnt ? sum / cnt : NAN;
        }
        int n_null = 0;
        const double nm = mean_defined(nulls, P, &n_null);
        if (n_null == P) { /* always, as a constant side stays constant under a permutation */
            double *sorted = nulls + P;
            memcpy(sorted, nulls, (size_t)P * sizeof *sorted);
            qsort(sorted, (size_t)P, sizeof *sorted, cmp_double);
            int two = 0, greater = 0;
            const double d = fabs(mean - nm);
            for (int b = 0; b < P; b++) {
                two += fabs(nulls[b] - nm) >= d;
                greater += nulls[b] >= mean;
            }
            s->null_mean = nm;
            s->null_lo = quantile7(sorted, P, 0.5 * (1.0 - spec->level));
            s->null_hi = quantile7(sorted, P, 0.5 * (1.0 + spec->level));
            s->p = (1.0 + two) / (1.0 + P);
            s->p_greater = (1.0 + greater) / (1.0 + P);
        }
    }
    if (per_input) memcpy(per_input, per, (size_t)K * sizeof *per);

done:
    if (rc != ALAB_OK) *s = (alab_corr_summary){NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0, 0, 0};
    free(per);
    free(eff);
    free(ra);
    free(rb);
    free(work);
    free(n1);
    free(vi);
    free(bit);
    free(nulls);
    free(ord);
    free(start);
    free(bord);
    free(btie);
    free(key);
    return rc;
}

int alab_permute_within_groups(double *reading, const int *offset, const int *group, int n_inputs, uint32_t seed) {
    if (!reading || !offset) return alab_fail(ALAB_EINVAL, "alab_permute_within_groups: NULL argument");
    if (n_inputs < 1) return alab_fail(ALAB_ERANGE, "alab_permute_within_groups: %d inputs", n_inputs);
    for (int k = 0; k < n_inputs; k++)
        if (offset[k] < 0 || offset[k + 1] < offset[k])
            return alab_fail(ALAB_EINVAL, "alab_permute_within_groups: offsets not non-decreasing at input %d", k);
    alab_rng rng;
    alab_rng_seed(&rng, seed);
    for (int k = 0; k < n_inputs; k++)
        for (int s = offset[k]; s < offset[k + 1];) {
            int e = s;
            while (e + 1 < offset[k + 1] && (!group || group[e + 1] == group[s])) e++;
            for (int i = e - s; i >= 1; i--) {
                const int j = (int)alab_rng_below(&rng, (uint32_t)(i + 1));
                const double t = reading[s + i];
                reading[s + i] = reading[s + j];
                reading[s + j] = t;
            }
            s = e + 1;
        }
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Clustered intervals, paired differences, corrections                       */
/* ------------------------------------------------------------------------ */

/* The clusters of the m values in play (their indices pos[0..m), ascending):
 * cid[t] in 0..G-1 numbers value t's cluster in order of first appearance
 * (cluster NULL: every value its own, cid[t] = t). key is scratch for 2m. */
static int number_clusters(int *cid, const int *cluster, const int *pos, int m, keyed *key) {
    if (!cluster) {
        for (int t = 0; t < m; t++) cid[t] = t;
        return m;
    }
    /* by (id, t): each id a run whose first entry is its first appearance */
    for (int t = 0; t < m; t++) key[t] = (keyed){(double)cluster[pos[t]], (double)t, t};
    qsort(key, (size_t)m, sizeof *key, cmp_keyed);
    keyed *run = key + m; /* (first appearance, start of the run in key, length) */
    int G = 0;
    for (int t = 0; t < m;) {
        int e = t;
        while (e + 1 < m && key[e + 1].key == key[t].key) e++;
        run[G++] = (keyed){key[t].key2, (double)t, e - t + 1};
        t = e + 1;
    }
    qsort(run, (size_t)G, sizeof *run, cmp_keyed); /* first appearances are distinct */
    for (int k = 0; k < G; k++) {
        const int s = (int)run[k].key2, len = run[k].i;
        for (int u = 0; u < len; u++) cid[key[s + u].i] = k;
    }
    return G;
}

/* The sums (left to right in value order) and counts of the G clusters. */
static void cluster_sums(double *s, double *cnt, const double *v, const int *cid, int m, int G) {
    for (int k = 0; k < G; k++) s[k] = cnt[k] = 0.0;
    for (int t = 0; t < m; t++) {
        s[cid[t]] += v[t];
        cnt[cid[t]] += 1.0;
    }
}

/* lo, hi of the cluster bootstrap of the pooled mean (n_boot >= 1, G >= 2): resamples of G clusters
 * drawn by alab_rng_below(G) from a generator seeded `seed`. means has room for n_boot. */
static void cluster_bootstrap(double *lo, double *hi, const double *s, const double *cnt, int G, int n_boot,
                              double level, uint32_t seed, double *means) {
    alab_rng rng;
    alab_rng_seed(&rng, seed);
    for (int b = 0; b < n_boot; b++) {
        double S = 0.0, M = 0.0;
        for (int t = 0; t < G; t++) {
            const uint32_t k = alab_rng_below(&rng, (uint32_t)G);
            S += s[k];
            M += cnt[k];
        }
        means[b] = S / M;
    }
    qsort(means, (size_t)n_boot, sizeof *means, cmp_double);
    *lo = quantile7(means, n_boot, 0.5 * (1.0 - level));
    *hi = quantile7(means, n_boot, 0.5 * (1.0 + level));
}

/* What the clustered statistics share: the values in play v (m), their
 * clusters numbered (cid), the clusters' sums and counts, and scratch. */
typedef struct {
    double *v, *s, *cnt, *means;
    int *pos, *cid;
    keyed *key;
    int m, G;
} clustered;

static void clustered_free(clustered *c) {
    free(c->v);
    free(c->s);
    free(c->cnt);
    free(c->means);
    free(c->pos);
    free(c->cid);
    free(c->key);
}

/* c->v, c->pos must hold the m values in play; numbers their clusters and sums them. */
static int clustered_alloc(clustered *c, int n, int n_boot, const char *where) {
    const size_t nn = (size_t)(n ? n : 1);
    c->v = malloc(nn * sizeof *c->v);
    c->s = malloc(nn * sizeof *c->s);
    c->cnt = malloc(nn * sizeof *c->cnt);
    c->means = malloc((size_t)(n_boot ? n_boot : 1) * sizeof *c->means);
    c->pos = malloc(nn * sizeof *c->pos);
    c->cid = malloc(nn * sizeof *c->cid);
    c->key = malloc(2 * nn * sizeof *c->key);
    if (!c->v || !c->s || !c->cnt || !c->means || !c->pos || !c->cid || !c->key) {
        clustered_free(c);
        return alab_fail(ALAB_ENOMEM, "%s: no memory for %d values and %d resamples", where, n, n_boot);
    }
    return ALAB_OK;
}

static void clustered_group(clustered *c, const int *cluster) {
    c->G = number_clusters(c->cid, cluster, c->pos, c->m, c->key);
    cluster_sums(c->s, c->cnt, c->v, c->cid, c->m, c->G);
}

/* The mean of c's values (left to right) and its cluster bootstrap interval. */
static void clustered_mean(double *mean, double *lo, double *hi, clustered *c, int n_boot, double level,
                           uint32_t seed) {
    *mean = *lo = *hi = NAN;
    if (c->m == 0) return;
    double sum = 0.0;
    for (int t = 0; t < c->m; t++) sum += c->v[t];
    *mean = sum / c->m;
    if (n_boot == 0) return;
    if (c->G == 1) { /* every resample is the one cluster: all the values */
        *lo = *hi = *mean;
        return;
    }
    cluster_bootstrap(lo, hi, c->s, c->cnt, c->G, n_boot, level, seed, c->means);
}

int alab_cluster_bootstrap_mean(double *mean, double *lo, double *hi, const double *x, const int *cluster, int n,
                                int n_boot, double level, uint32_t seed) {
    static const char *const where = "alab_cluster_bootstrap_mean";
    if (!mean || !lo || !hi) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    *mean = *lo = *hi = NAN;
    if (n < 0 || n > ALAB_EVIDENCE_MAX_N)
        return alab_fail(ALAB_ELIMIT, "%s: n = %d outside [0, %d]", where, n, ALAB_EVIDENCE_MAX_N);
    if (!x && n > 0) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    int rc;
    if ((rc = check_resamples(n_boot, "n_boot", where)) != ALAB_OK) return rc;
    if ((rc = check_level(level, where)) != ALAB_OK) return rc;
    for (int i = 0; i < n; i++)
        if (isinf(x[i])) return alab_fail(ALAB_ENAN, "%s: value %d is infinite", where, i);
    clustered c = {0};
    if ((rc = clustered_alloc(&c, n, n_boot, where)) != ALAB_OK) return rc;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) {
            c.v[c.m] = x[i];
            c.pos[c.m++] = i;
        }
    clustered_group(&c, cluster);
    clustered_mean(mean, lo, hi, &c, n_boot, level, seed);
    clustered_free(&c);
    return ALAB_OK;
}

/* The two-sided p of the cluster sign-flip test of c's values (G >= 1, n_perm >= 1). */
static double sign_flip_p(const clustered *c, int n_perm, uint32_t seed) {
    double obs = 0.0;
    for (int k = 0; k < c->G; k++) obs += c->s[k];
    obs = fabs(obs / c->m);
    alab_rng rng;
    alab_rng_seed(&rng, seed);
    int count = 0;
    for (int b = 0; b < n_perm; b++) {
        double S = 0.0;
        for (int k = 0; k < c->G; k++) S += alab_rng_below(&rng, 2) ? -c->s[k] : c->s[k];
        count += fabs(S / c->m) >= obs;
    }
    return (1.0 + count) / (1.0 + n_perm);
}

int alab_paired_diff(double *out, const double *x, const double *y, const int *cluster, int n, int n_boot,
                     int n_perm, double level, uint32_t seed) {
    static const char *const where = "alab_paired_diff";
    if (!out) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    for (int k = 0; k < ALAB_PAIRED_OUT; k++) out[k] = NAN;
    out[4] = out[5] = 0.0;
    if (n < 0 || n > ALAB_EVIDENCE_MAX_N)
        return alab_fail(ALAB_ELIMIT, "%s: n = %d outside [0, %d]", where, n, ALAB_EVIDENCE_MAX_N);
    if ((!x || !y) && n > 0) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    int rc;
    if ((rc = check_resamples(n_boot, "n_boot", where)) != ALAB_OK) return rc;
    if ((rc = check_resamples(n_perm, "n_perm", where)) != ALAB_OK) return rc;
    if ((rc = check_level(level, where)) != ALAB_OK) return rc;
    for (int i = 0; i < n; i++) {
        if (isinf(x[i]) || isinf(y[i]))
            return alab_fail(ALAB_ENAN, "%s: %s value %d is infinite", where, isinf(x[i]) ? "x" : "y", i);
        if (isinf(x[i] - y[i])) return alab_fail(ALAB_ENAN, "%s: the difference of pair %d overflows", where, i);
    }
    clustered c = {0};
    if ((rc = clustered_alloc(&c, n, n_boot, where)) != ALAB_OK) return rc;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i]) && !isnan(y[i])) {
            c.v[c.m] = x[i] - y[i];
            c.pos[c.m++] = i;
        }
    clustered_group(&c, cluster);
    clustered_mean(&out[0], &out[1], &out[2], &c, n_boot, level, seed);
    if (c.m > 0 && n_perm > 0) out[3] = sign_flip_p(&c, n_perm, seed + 1u);
    out[4] = c.m;
    out[5] = c.G;
    clustered_free(&c);
    return ALAB_OK;
}

int alab_holm(double *adjusted, const double *p, int n) {
    static const char *const where = "alab_holm";
    if (n < 0 || n > ALAB_EVIDENCE_MAX_N)
        return alab_fail(ALAB_ELIMIT, "%s: n = %d outside [0, %d]", where, n, ALAB_EVIDENCE_MAX_N);
    if ((!adjusted || !p) && n > 0) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    for (int i = 0; i < n; i++) {
        if (isinf(p[i])) return alab_fail(ALAB_ENAN, "%s: p[%d] is infinite", where, i);
        if (p[i] < 0.0 || p[i] > 1.0) return alab_fail(ALAB_ERANGE, "%s: p[%d] = %g outside [0, 1]", where, i, p[i]);
    }
    keyed *k = malloc((size_t)(n ? n : 1) * sizeof *k);
    if (!k) return alab_fail(ALAB_ENOMEM, "%s: no memory for %d p-values", where, n);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(p[i])) k[m++] = (keyed){p[i], 0.0, i};
    qsort(k, (size_t)m, sizeof *k, cmp_keyed); /* ascending, ties by the lower index */
    for (int i = 0; i < n; i++)
        if (isnan(p[i])) adjusted[i] = NAN;
    double run = 0.0;
    for (int j = 0; j < m; j++) { /* k[j].key: the input, read before adjusted (which may be p) is written */
        const double a = (double)(m - j) * k[j].key;
        if (a > run) run = a;
        adjusted[k[j].i] = run < 1.0 ? run : 1.0;
    }
    free(k);
    return ALAB_OK;
}

int alab_partial_spearman(double *rho, const double *x, const double *y, const double *z, int n) {
    static const char *const where = "alab_partial_spearman";
    if (!rho) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    *rho = NAN;
    int rc = check_pair(x, y, n, where);
    if (rc == ALAB_OK) rc = check_pair(x, z, n, where);
    if (rc != ALAB_OK) return rc;
    if (n < 2) return ALAB_OK;
    double *r = malloc(3 * (size_t)n * sizeof *r);
    keyed *k = malloc((size_t)n * sizeof *k);
    if (!r || !k) {
        free(r);
        free(k);
        return alab_fail(ALAB_ENOMEM, "%s: no memory for %d values", where, n);
    }
    double *rx = r, *ry = r + n, *rz = r + 2 * (size_t)n;
    ranks_into(rx, x, n, k);
    ranks_into(ry, y, n, k);
    ranks_into(rz, z, n, k);
    const double rxy = spearman_of_ranks(rx, ry, n), rxz = spearman_of_ranks(rx, rz, n),
                 ryz = spearman_of_ranks(ry, rz, n);
    free(r);
    free(k);
    const double num = rxy - rxz * ryz;
    const double den = sqrt((1.0 - rxz * rxz) * (1.0 - ryz * ryz));
    if (!(den > 0.0) || isnan(num)) return ALAB_OK; /* a rho undefined, or z ranks x or y perfectly */
    const double v = num / den;
    *rho = v > 1.0 ? 1.0 : v < -1.0 ? -1.0 : v;
    return ALAB_OK;
}

int alab_quantiles(double *out, const double *x, int n, const double *q, int nq) {
    static const char *const where = "alab_quantiles";
    if (n < 0 || n > ALAB_EVIDENCE_MAX_N || nq < 0 || nq > ALAB_EVIDENCE_MAX_N)
        return alab_fail(ALAB_ELIMIT, "%s: n = %d, nq = %d: each must lie in [0, %d]", where, n, nq,
                         ALAB_EVIDENCE_MAX_N);
    if ((!x && n > 0) || ((!out || !q) && nq > 0)) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    for (int k = 0; k < nq; k++) out[k] = NAN;
    for (int k = 0; k < nq; k++)
        if (!(q[k] >= 0.0 && q[k] <= 1.0)) return alab_fail(ALAB_ERANGE, "%s: q[%d] = %g outside [0, 1]", where, k, q[k]);
    for (int i = 0; i < n; i++)
        if (isinf(x[i])) return alab_fail(ALAB_ENAN, "%s: value %d is infinite", where, i);
    double *s = malloc((size_t)(n ? n : 1) * sizeof *s);
    if (!s) return alab_fail(ALAB_ENOMEM, "%s: no memory for %d values", where, n);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) s[m++] = x[i];
    if (m > 0) {
        qsort(s, (size_t)m, sizeof *s, cmp_double);
        for (int k = 0; k < nq; k++) out[k] = quantile7(s, m, q[k]);
    }
    free(s);
    return ALAB_OK;
}
