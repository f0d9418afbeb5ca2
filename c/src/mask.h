/* mask.h — which keys a query row may attend to: the range of each mask mode
 * (here, inline: attention's row loop asks it for every row) and the mask a
 * layer runs under (mask.c). */
#ifndef ALAB_MASK_H
#define ALAB_MASK_H

#include "internal.h"

/* The positions row i of a T-token run may attend to under a mask mode: [*lo, *hi). */
static inline void alab_mask_range(int *lo, int *hi, int mode, int window, int i, int T) {
    switch (mode) {
    case ALAB_MASK_FULL: *lo = 0; *hi = T; break;
    case ALAB_MASK_WINDOW: *lo = i - window + 1 > 0 ? i - window + 1 : 0; *hi = i + 1; break;
    default: *lo = 0; *hi = i + 1; break;
    }
}

/* The mask layer l runs under with options o: the options' (per-layer) mask, where "causal" is the model's own
 * causal mask, a sliding window of arch.layer_window[l] keys on the layers config.json gives one. */
void alab_layer_mask(const alab_model *m, const alab_run_opts *o, int l, int *mode, int *window);

#endif
