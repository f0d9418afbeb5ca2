/* mask.c — the mask a layer runs under: the options' mask, where "causal" is
 * the model's own causal mask (within its sliding window on the layers that
 * have one). attention.c applies it (the range of each mode is mask.h's);
 * interventions.c checks a soft do against it. */
#include "mask.h"
#include "model.h"

int alab_model_layer_window(const alab_model *m, int layer) {
    if (!m) return alab_fail(ALAB_EINVAL, "alab_model_layer_window: NULL model");
    if (layer < 0 || layer >= m->cfg.n_layer)
        return alab_fail(ALAB_ERANGE, "alab_model_layer_window: layer %d is outside [0, %d)", layer, m->cfg.n_layer);
    return m->arch.layer_window[layer];
}

void alab_layer_mask(const alab_model *m, const alab_run_opts *o, int l, int *mode, int *window) {
    *mode = o->layer_mask ? o->layer_mask[l] : o->mask;
    *window = o->layer_mask && o->layer_window ? o->layer_window[l] : o->window;
    if (*mode == ALAB_MASK_CAUSAL && m->arch.layer_window[l] > 0) { /* the model's causal mask slides */
        *mode = ALAB_MASK_WINDOW;
        *window = m->arch.layer_window[l];
    }
}
