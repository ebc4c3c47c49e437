/**
 * A link to ``notebook.ipynb#cell-id=ID`` opens the notebook at that cell on the first click.
 *
 * A click on such a link in an output opens the notebook and then hands it the fragment
 * (``setFragment``); JupyterLab applies it as soon as the document is loaded — when the click
 * itself opens the notebook, that is before the tab is shown and its cells are laid out, and the
 * notebook shows its top. Here ``setFragment`` of every notebook (wrapped as the notebook widget is
 * created, before anything can call it) applies the fragment again once the notebook is on screen
 * with the cell laid out, and holds it for a moment while late layout (images, outputs) shifts the
 * cells — unless the user scrolls first. A ``/lab/tree/PATH#cell-id=ID`` address (the router) gets
 * the same treatment for the notebook of that path.
 */

import type { IRouter } from '@jupyterlab/application';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

const SETTLE_MS = 1500;

function cellIdOf(fragment: string): string | null {
  const m = /^#?cell-id=(.+)$/.exec(fragment);
  return m ? decodeURIComponent(m[1]) : null;
}

function visible(el: HTMLElement): boolean {
  return el.isConnected && el.offsetParent !== null && el.getBoundingClientRect().height > 0;
}

function frame(): Promise<void> {
  return new Promise(resolve => requestAnimationFrame(() => resolve()));
}

async function goTo(panel: NotebookPanel, id: string): Promise<void> {
  await panel.context.ready;
  await panel.revealed;
  const nb = panel.content;
  const deadline = Date.now() + 30_000;
  let index = -1;
  while (Date.now() < deadline && !panel.isDisposed) {
    index = nb.widgets.findIndex(w => w.model.id === id);
    if (index >= 0 && visible(nb.node)) {
      break;
    }
    await frame();
  }
  if (index < 0 || panel.isDisposed) {
    return;
  }
  let userMoved = false;
  const stop = () => {
    userMoved = true;
  };
  nb.node.addEventListener('wheel', stop, { once: true, passive: true });
  nb.node.addEventListener('keydown', stop, { once: true });
  nb.node.addEventListener('mousedown', stop, { once: true });
  nb.activeCellIndex = index;
  const until = Date.now() + SETTLE_MS;
  while (!userMoved && !panel.isDisposed && Date.now() < until) {
    const cell = nb.widgets[nb.widgets.findIndex(w => w.model.id === id)];
    if (!cell) {
      break;
    }
    const view = nb.node.getBoundingClientRect();
    const box = cell.node.getBoundingClientRect();
    if (box.height === 0 || box.top < view.top || box.top > view.bottom - 20) {
      await nb.scrollToCell(cell, 'start');
      cell.node.scrollIntoView({ block: 'start' });
    }
    await frame();
  }
  nb.node.removeEventListener('wheel', stop);
  nb.node.removeEventListener('keydown', stop);
  nb.node.removeEventListener('mousedown', stop);
}

/** Applies the router's ``#cell-id=`` fragments to the notebook of the routed path. */
export function followRoutedFragments(router: IRouter, tracker: INotebookTracker): void {
  let pending: { path: string; id: string; until: number } | null = null;
  const apply = (panel: NotebookPanel) => {
    if (pending && Date.now() < pending.until && panel.context.path === pending.path) {
      const id = pending.id;
      pending = null;
      void goTo(panel, id);
    }
  };
  router.routed.connect((_, location) => {
    const id = cellIdOf(location.hash || '');
    const m = /\/tree\/(.+)$/.exec(location.path);
    if (id === null || !m) {
      return;
    }
    pending = { path: decodeURIComponent(m[1]), id, until: Date.now() + 30_000 };
    tracker.forEach(apply);
  });
  tracker.widgetAdded.connect((_, panel) => apply(panel));
}

/** Makes ``panel`` open at the cell a ``#cell-id=`` fragment names, also on the click that opens it. */
export function followCellFragments(panel: NotebookPanel): void {
  const marked = panel as NotebookPanel & { _wsFragments?: boolean };
  if (marked._wsFragments) {
    return;
  }
  marked._wsFragments = true;
  const original = panel.setFragment.bind(panel);
  panel.setFragment = (fragment: string) => {
    original(fragment);
    const id = cellIdOf(fragment);
    if (id !== null) {
      void goTo(panel, id);
    }
  };
}
