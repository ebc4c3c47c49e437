/**
 * Small DOM helpers for what the extension draws inside cells: buttons that act without taking
 * the focus (a click on Accept while the user types in another cell leaves the cursor where it
 * was, and does not make the proposal's cell the active one), and text-only labels.
 */

import type { Cell } from '@jupyterlab/cells';
import { PanelLayout, Widget } from '@lumino/widgets';

const SWALLOW = ['mousedown', 'mouseup', 'pointerdown', 'pointerup', 'dblclick', 'focusin'];

/** Keeps pointer events inside ``node`` from reaching the notebook (no cell activation). */
export function isolate(node: HTMLElement): void {
  for (const type of SWALLOW) {
    node.addEventListener(type, event => event.stopPropagation());
  }
}

/** A button named ``label`` (its accessible name) that runs ``action`` without taking the focus. */
export function button(label: string, title: string, action: () => void, className = ''): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = `jp-Button ws-live-button ${className}`.trim();
  b.textContent = label;
  b.title = title;
  b.addEventListener('mousedown', event => event.preventDefault());
  b.addEventListener('click', event => {
    event.preventDefault();
    event.stopPropagation();
    action();
  });
  return b;
}

/** An element with a class and text (never HTML). */
export function text(tag: string, className: string, content: string): HTMLElement {
  const el = document.createElement(tag);
  el.className = className;
  el.textContent = content;
  return el;
}

/** A widget around ``node``, placed in ``cell``'s layout at ``index`` (end when omitted). */
export function attachToCell(cell: Cell, node: HTMLElement, index?: number): Widget {
  const widget = new Widget({ node });
  const layout = cell.layout as PanelLayout;
  if (index === undefined || index >= layout.widgets.length) {
    layout.addWidget(widget);
  } else {
    layout.insertWidget(index, widget);
  }
  return widget;
}
