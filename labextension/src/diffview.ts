/**
 * A cell's change drawn as text: removed lines, added lines, a little context.
 *
 * Everything the agent sent is put into the page as text nodes (``textContent``), never parsed
 * as HTML, so a ``<script>`` or a ``javascript:`` link in a proposal is shown, not run. Work is
 * bounded: sides over DIFF_MAX_CHARS are summarised instead of compared, the comparison gives up
 * after 200 ms, at most DIFF_MAX_LINES lines are drawn and each line is cut at
 * DIFF_MAX_LINE_CHARS characters.
 */

import { diffLines } from 'diff';

import { DIFF_MAX_CHARS, DIFF_MAX_LINE_CHARS, DIFF_MAX_LINES } from './limits';

type Kind = 'add' | 'del' | 'ctx' | 'note';

const CONTEXT = 2;

function splitLines(text: string): string[] {
  if (text === '') {
    return [];
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines;
}

function lineNode(kind: Kind, text: string): HTMLElement {
  const row = document.createElement('div');
  row.className = `ws-live-line ws-live-${kind}`;
  const sign = document.createElement('span');
  sign.className = 'ws-live-sign';
  sign.textContent = kind === 'add' ? '+' : kind === 'del' ? '-' : kind === 'note' ? '…' : ' ';
  const body = document.createElement('span');
  body.className = 'ws-live-text';
  body.textContent = text.length > DIFF_MAX_LINE_CHARS ? text.slice(0, DIFF_MAX_LINE_CHARS) + ` … [${text.length - DIFF_MAX_LINE_CHARS} more characters]` : text;
  row.append(sign, body);
  return row;
}

/** Lines of one kind (all added: a new cell; all removed: a deleted one). */
export function linesView(kind: 'add' | 'del', text: string): HTMLElement {
  const box = document.createElement('div');
  box.className = 'ws-live-diff';
  const lines = splitLines(text.length > DIFF_MAX_CHARS ? text.slice(0, DIFF_MAX_CHARS) : text);
  lines.slice(0, DIFF_MAX_LINES).forEach(l => box.appendChild(lineNode(kind, l)));
  const more = splitLines(text).length - Math.min(lines.length, DIFF_MAX_LINES);
  if (more > 0 || text.length > DIFF_MAX_CHARS) {
    box.appendChild(lineNode('note', `${more > 0 ? more : 'more'} lines not shown (${text.length} characters in all)`));
  }
  if (lines.length === 0) {
    box.appendChild(lineNode('note', '(empty)'));
  }
  return box;
}

/** Old vs new source of one cell. */
export function diffView(oldText: string, newText: string): HTMLElement {
  const box = document.createElement('div');
  box.className = 'ws-live-diff';
  if (oldText.length > DIFF_MAX_CHARS || newText.length > DIFF_MAX_CHARS) {
    box.appendChild(lineNode('note', `large change: ${splitLines(oldText).length} lines replaced by ${splitLines(newText).length} lines (not compared line by line)`));
    box.appendChild(linesView('add', newText));
    return box;
  }
  const changes = diffLines(oldText, newText, { timeout: 200 });
  if (!changes) {
    box.appendChild(lineNode('note', 'the change is too large to compare line by line; the new source:'));
    box.appendChild(linesView('add', newText));
    return box;
  }
  let drawn = 0;
  let hidden = 0;
  const draw = (kind: Kind, text: string) => {
    if (drawn < DIFF_MAX_LINES) {
      box.appendChild(lineNode(kind, text));
      drawn++;
    } else {
      hidden++;
    }
  };
  changes.forEach((change, i) => {
    const lines = splitLines(change.value);
    if (change.added || change.removed) {
      lines.forEach(l => draw(change.added ? 'add' : 'del', l));
      return;
    }
    // unchanged run: a little context around the changes
    const first = i === 0;
    const last = i === changes.length - 1;
    if (lines.length <= CONTEXT * 2 + 1 || (first && last)) {
      lines.forEach(l => draw('ctx', l));
      return;
    }
    const head = first ? [] : lines.slice(0, CONTEXT);
    const tail = last ? [] : lines.slice(-CONTEXT);
    head.forEach(l => draw('ctx', l));
    draw('note', `${lines.length - head.length - tail.length} unchanged lines`);
    tail.forEach(l => draw('ctx', l));
  });
  if (hidden > 0) {
    box.appendChild(lineNode('note', `${hidden} more lines not shown`));
  }
  if (oldText === newText) {
    box.appendChild(lineNode('note', 'the source is unchanged'));
  }
  return box;
}
