// The site's theme: VitePress's default, plus the attnlab widgets. The custom
// elements are registered in the browser only (VitePress renders pages on the
// server first, where there is no customElements); the config tells Vue that
// attnlab-* tags are custom elements. The widget fetches the wasm and the
// built-in model from /attnlab/ (copied there by `make docs-prep`, with the
// figures' posters) and follows the site's dark-mode switch.

import DefaultTheme from 'vitepress/theme';
import { inBrowser, useData, withBase } from 'vitepress';
import { watch } from 'vue';
import './custom.css';

let widget = null;
function loadWidget() {
  widget ??= import('attnlab/widget').then((w) => {
    w.configure({
      wasm: withBase('/attnlab/attnlab.wasm'),
      model: withBase('/attnlab/models/brown-gpt2/'),
      modelName: 'brown-gpt2',
      posters: withBase('/attnlab/posters/'),   // drawn from the same model by make widget
    });
    return w;
  });
  return widget;
}

export default {
  extends: DefaultTheme,
  enhanceApp() {
    if (inBrowser) loadWidget();
  },
  setup() {
    if (!inBrowser) return;
    const { isDark } = useData();
    watch(isDark, (dark) => { loadWidget().then((w) => w.configure({ theme: dark ? 'dark' : 'light' })); }, { immediate: true });
  },
};
