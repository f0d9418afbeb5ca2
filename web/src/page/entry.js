// entry.js — the page's first script (index.html): small, so that it runs soon after the HTML is parsed. It
// starts the model worker and takes over the built-in model's downloads (head-start.js), then imports the rest
// of the page (main.js: the figures, the panels, the messages), which picks both up on its first load.

import '../ui/page.css';
import { headStart } from './head-start.js';

performance.mark('attnlab:entry');
const early = headStart(location.search, document.baseURI);
import('./main.js').then(({ start }) => start(early), (e) => {
  // the page's code did not arrive (a network error): say so where the status line is
  document.body.dataset.state = 'error';
  const s = document.getElementById('status');
  if (s) s.textContent = `attnlab: the page's code could not be loaded (${e && e.message}). Reload the page.`;
});
