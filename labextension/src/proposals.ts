/**
 * Proposals: the agent's edits of the open notebook, reviewed before they apply.
 *
 * A proposal arrives checked (types, sizes, cells that exist, versions that match: a mismatch is
 * answered "stale" at once with the cell's current source) and is drawn in the notebook as an
 * inline diff per cell — new cells and deleted cells shown as such — with Accept and Reject for
 * the whole proposal and, when it spans cells, for each cell. Nothing changes until the user
 * accepts; then the edits apply through the notebook's own shared model at once, as one undo step
 * (Undo reverts all of it), after checking again that every cell is as the agent read
 * it, that the user is not typing in it and that it is not running or queued. In the user's
 * "accept" mode the same checks run and the edits apply at once, with a marker on each cell.
 */

import type { YNotebook } from '@jupyter/ydoc';
import { NotebookActions } from '@jupyterlab/notebook';
import type { Widget } from '@lumino/widgets';

import { diffView, linesView } from './diffview';
import { cellVersion, utf8Bytes } from './hash';
import { MAX_EDITS, MAX_OPEN_PROPOSALS, MAX_PROPOSAL_BYTES, MAX_SOURCE_BYTES, MAX_TOKEN } from './limits';
import type { ISettings } from './read';
import { NotebookState, versionOf } from './state';
import { attachToCell, button, isolate, text } from './ui';

type Op = 'replace' | 'insert' | 'delete' | 'move';
type CellStatus = 'pending' | 'applied' | 'rejected' | 'stale' | 'invalid';

interface IEdit {
  n: number;
  op: Op;
  cell_id?: string;
  version?: string;
  source?: string;
  cell_type?: string;
  after?: string;
  status: CellStatus;
  outcome?: { [key: string]: unknown };
}

interface IProposal {
  id: string;
  edits: IEdit[];
  widgets: Widget[];
  chains: Map<string, string[]>;
  auto: boolean;
  received: number;
  visible?: number;
}

/** When a proposal arrived and when its diff was first on screen (epoch ms), for measurements. */
export interface IProposalTiming {
  id: string;
  received: number;
  visible: number | null;
  decided: number | null;
  applied: number | null;
}

const OPS: Op[] = ['replace', 'insert', 'delete', 'move'];
const CELL_TYPES = ['code', 'markdown', 'raw'];

function isToken(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_TOKEN;
}

/** The edits of a proposal request, or why they are not acceptable. */
export function checkEdits(args: { [key: string]: unknown }): IEdit[] | string {
  const raw = args['edits'];
  if (!Array.isArray(raw) || raw.length === 0) {
    return 'a proposal needs at least one edit';
  }
  if (raw.length > MAX_EDITS) {
    return `${raw.length} edits in one proposal: at most ${MAX_EDITS}`;
  }
  let total = 0;
  const edits: IEdit[] = [];
  for (let n = 0; n < raw.length; n++) {
    const e = raw[n] as { [key: string]: unknown };
    if (!e || typeof e !== 'object' || !OPS.includes(e['op'] as Op)) {
      return `edits[${n}]: op must be one of ${OPS.join(', ')}`;
    }
    const op = e['op'] as Op;
    const edit: IEdit = { n, op, status: 'pending' };
    if (op !== 'insert') {
      if (!isToken(e['cell_id']) || !isToken(e['version'])) {
        return `edits[${n}]: ${op} needs cell_id and version`;
      }
      edit.cell_id = e['cell_id'];
      edit.version = e['version'];
    }
    if (op === 'replace' || op === 'insert') {
      if (typeof e['source'] !== 'string') {
        return `edits[${n}]: ${op} needs a source`;
      }
      const size = utf8Bytes(e['source']);
      if (size > MAX_SOURCE_BYTES) {
        return `edits[${n}]: a source of ${size} bytes is over the ${MAX_SOURCE_BYTES} bytes a cell may get`;
      }
      total += size;
      edit.source = e['source'];
    }
    if (e['cell_type'] !== undefined && e['cell_type'] !== null) {
      if (!CELL_TYPES.includes(e['cell_type'] as string) || (op !== 'replace' && op !== 'insert')) {
        return `edits[${n}]: cell_type must be code, markdown or raw (replace, insert)`;
      }
      edit.cell_type = e['cell_type'] as string;
    } else if (op === 'insert') {
      return `edits[${n}]: insert needs a cell_type`;
    }
    if (op === 'insert' || op === 'move') {
      if (typeof e['after'] !== 'string' || e['after'].length > MAX_TOKEN) {
        return `edits[${n}]: ${op} needs after (a cell id, or '' for first)`;
      }
      edit.after = e['after'];
    }
    edits.push(edit);
  }
  if (total > MAX_PROPOSAL_BYTES) {
    return `the proposal's sources total ${total} bytes: at most ${MAX_PROPOSAL_BYTES}`;
  }
  const touched = edits.filter(e => e.cell_id).map(e => e.cell_id);
  if (new Set(touched).size !== touched.length) {
    return 'a cell is changed twice in one proposal';
  }
  return edits;
}

/** Where a cell goes "after" ``anchor`` ('' = first), behind the cells this proposal already put there. */
function placeAfter(ids: string[], anchor: string, chain: string[]): number {
  let pos = anchor === '' ? 0 : ids.indexOf(anchor) + 1;
  while (pos < ids.length && chain.includes(ids[pos])) {
    pos++;
  }
  return pos;
}

export class Proposals {
  constructor(
    private readonly state: NotebookState,
    private readonly send: (message: { [key: string]: unknown }) => void,
    private readonly settings: () => ISettings
  ) {
    const model = state.panel.content.model!;
    model.cells.changed.connect(this._scheduleRender, this);
    model.contentChanged.connect(this._scheduleStaleCheck, this);
    const um = this.state.notebook.undoManager;
    um.on('stack-item-added', this._onUndoStack);
    um.on('stack-item-popped', this._onUndoStack);
  }

  /** Timings of the latest proposals (newest last). */
  readonly timings: IProposalTiming[] = [];

  /** Handles a ``propose`` request: the outcome (pending, applied, stale or invalid). */
  propose(args: { [key: string]: unknown }): { [key: string]: unknown } {
    const received = Date.now();
    const id = `P${++this._count}-${this._tag}`;
    const checked = checkEdits(args);
    if (typeof checked === 'string') {
      return { proposal_id: id, status: 'invalid', message: checked, cells: [] };
    }
    const p: IProposal = { id, edits: checked, widgets: [], chains: new Map(), auto: false, received };
    const planned = this._plan(p);
    if (planned) {
      return { proposal_id: id, status: 'invalid', message: planned, cells: [] };
    }
    // a cell not as the agent read it, being typed in or running: answered at once, nothing shown
    const stale = p.edits.map(e => this._staleReason(p, e));
    if (stale.some(r => r !== null)) {
      p.edits.forEach((e, i) => {
        if (stale[i]) {
          this._markStale(e, stale[i]!);
        } else {
          e.status = 'invalid';
          e.outcome = this._outcome(e, { reason: 'not applied: another edit of this proposal is stale' });
        }
      });
      return this._summary(p);
    }
    if (this.settings().mode === 'accept') {
      p.auto = true;
      this._apply(p, p.edits);
      this._record(p, received, received, Date.now());
      this._markApplied(p);
      return this._summary(p);
    }
    if (this._open.size >= MAX_OPEN_PROPOSALS) {
      return {
        proposal_id: id,
        status: 'invalid',
        message: `${this._open.size} proposals already wait for the user's review; wait for their decisions first`,
        cells: []
      };
    }
    this._open.set(id, p);
    this._render(p);
    this._record(p, received, null, null);
    requestAnimationFrame(() => {
      p.visible = Date.now();
      const t = this.timings.find(x => x.id === id);
      if (t) {
        t.visible = p.visible;
      }
    });
    return this._summary(p);
  }

  /** The user's decision on a whole proposal (``edit`` null) or on one of its cells. */
  decide(id: string, edit: number | null, accept: boolean): void {
    const p = this._open.get(id);
    if (!p) {
      return;
    }
    const decided = Date.now();
    const pending = p.edits.filter(e => e.status === 'pending' && (edit === null || e.n === edit));
    if (!accept) {
      pending.forEach(e => {
        e.status = 'rejected';
        e.outcome = this._outcome(e);
      });
    } else {
      const stale = pending.map(e => this._staleReason(p, e));
      if (stale.some(r => r !== null)) {
        pending.forEach((e, i) => {
          if (stale[i]) {
            this._markStale(e, stale[i]!);
          } else if (edit === null) {
            e.status = 'invalid';
            e.outcome = this._outcome(e, { reason: 'not applied: another edit of this proposal is stale' });
          }
        });
      } else {
        this._apply(p, pending);
      }
    }
    const t = this.timings.find(x => x.id === id);
    if (t) {
      t.decided = decided;
      t.applied = accept ? Date.now() : null;
    }
    if (p.edits.every(e => e.status !== 'pending')) {
      this._close(p);
    } else {
      this._render(p);
    }
  }

  /** Withdraws every open proposal (the channel closed). */
  dispose(): void {
    for (const p of this._open.values()) {
      p.widgets.forEach(w => w.dispose());
    }
    this._open.clear();
    this.state.notebook.undoManager.off('stack-item-added', this._onUndoStack);
    this.state.notebook.undoManager.off('stack-item-popped', this._onUndoStack);
  }

  /** Open proposal ids (for tests and the status of the page). */
  get open(): string[] {
    return [...this._open.keys()];
  }

  // --- checking -------------------------------------------------------------------------------

  /** A dry run over the cell ids: every cell and every place named exists when its edit comes. */
  private _plan(p: IProposal): string | null {
    const ids = this.state.notebook.cells.map(c => c.id);
    const chains = new Map<string, string[]>();
    let fake = 0;
    for (const e of p.edits) {
      const where = `edits[${e.n}]`;
      if (e.cell_id !== undefined && !ids.includes(e.cell_id)) {
        return `${where}: no cell ${e.cell_id} in the notebook (read it again)`;
      }
      if (e.after !== undefined && e.after !== '' && (!ids.includes(e.after) || e.after === e.cell_id)) {
        return `${where}: no cell ${e.after} to place it after`;
      }
      if (e.op === 'delete') {
        ids.splice(ids.indexOf(e.cell_id!), 1);
      } else if (e.op === 'move') {
        ids.splice(ids.indexOf(e.cell_id!), 1);
        const chain = chains.get(e.after!) ?? [];
        ids.splice(placeAfter(ids, e.after!, chain), 0, e.cell_id!);
        chains.set(e.after!, [...chain, e.cell_id!]);
      } else if (e.op === 'insert') {
        const chain = chains.get(e.after!) ?? [];
        const newId = `\u0000new${fake++}`;
        ids.splice(placeAfter(ids, e.after!, chain), 0, newId);
        chains.set(e.after!, [...chain, newId]);
      }
    }
    return null;
  }

  /** Why ``e`` may not apply now (null: it may). */
  private _staleReason(p: IProposal, e: IEdit): string | null {
    const s = this.state;
    if (e.cell_id !== undefined) {
      const idx = s.indexOf(e.cell_id);
      if (idx < 0) {
        return 'the cell was deleted';
      }
      if (versionOf(s.notebook.cells[idx]) !== e.version) {
        return 'the cell changed since it was read';
      }
      if (s.isEditing(e.cell_id)) {
        return 'the user is editing the cell';
      }
      if (s.isBusy(e.cell_id)) {
        return s.running === e.cell_id ? 'the cell is running' : 'the cell is queued to run';
      }
    }
    if (e.after !== undefined && e.after !== '' && s.indexOf(e.after) < 0) {
      return `the cell ${e.after} it goes after was deleted`;
    }
    return null;
  }

  private _markStale(e: IEdit, reason: string): void {
    e.status = 'stale';
    const idx = e.cell_id !== undefined ? this.state.indexOf(e.cell_id) : -1;
    const cell = idx >= 0 ? this.state.notebook.cells[idx] : null;
    e.outcome = this._outcome(e, {
      reason,
      ...(cell ? { source: cell.getSource(), version: versionOf(cell) } : {})
    });
  }

  private _outcome(e: IEdit, extra: { [key: string]: unknown } = {}): { [key: string]: unknown } {
    return { cell_id: e.cell_id ?? null, op: e.op, status: e.status, ...extra };
  }

  // --- applying -------------------------------------------------------------------------------

  /**
   * Applies ``edits`` (already checked) as one undo step, in one JavaScript task (no keystroke can
   * come in between). Each edit is its own transaction of the shared model, because the model's
   * cell list is refreshed only when a transaction ends (an index read inside one transaction
   * after a structural change would name the wrong cell); the undo manager is told to capture
   * them all as one step, and neither the user's change before nor the one after.
   */
  private _apply(p: IProposal, edits: IEdit[]): void {
    const nb = this.state.notebook;
    const um = nb.undoManager;
    const capture = um.captureTimeout;
    um.stopCapturing();
    um.captureTimeout = 2 ** 31;
    try {
      for (const e of edits) {
        nb.transact(() => {
          e.outcome = this._applyOne(p, nb, e);
        });
        e.status = 'applied';
        e.outcome!['status'] = 'applied';
      }
    } finally {
      um.captureTimeout = capture;
      um.stopCapturing();
    }
    this._undoItem = um.undoStack[um.undoStack.length - 1] ?? null;
    this.state.panel.content.node.classList.toggle('ws-live-undo', this._undoItem !== null);
  }

  private _applyOne(p: IProposal, nb: YNotebook, e: IEdit): { [key: string]: unknown } {
    const ids = () => nb.cells.map(c => c.id);
    if (e.op === 'insert') {
      const chain = p.chains.get(e.after!) ?? [];
      const at = placeAfter(ids(), e.after!, chain);
      const cell = nb.insertCell(at, this._newCell(e.cell_type!, e.source!));
      p.chains.set(e.after!, [...chain, cell.id]);
      return { cell_id: cell.id, op: e.op, version: cellVersion(e.cell_type!, e.source!) };
    }
    const idx = this.state.indexOf(e.cell_id!);
    if (e.op === 'delete') {
      nb.deleteCell(idx);
      return { cell_id: e.cell_id, op: e.op };
    }
    if (e.op === 'move') {
      const rest = ids().filter(id => id !== e.cell_id);
      const chain = p.chains.get(e.after!) ?? [];
      const to = placeAfter(rest, e.after!, chain);
      const version = versionOf(nb.cells[idx]);
      if (to !== idx) {
        nb.moveCell(idx, to);
      }
      p.chains.set(e.after!, [...chain, e.cell_id!]);
      return { cell_id: e.cell_id, op: e.op, version };
    }
    const cell = nb.cells[idx];
    if (e.cell_type && e.cell_type !== cell.cell_type) {
      // a type change is a new cell in the same place with the same id (as JupyterLab does it)
      const json = { ...(cell.toJSON() as { [key: string]: unknown }), ...this._newCell(e.cell_type, e.source!) };
      json['id'] = cell.id;
      json['metadata'] = (cell.toJSON() as { metadata?: unknown }).metadata ?? {};
      nb.deleteCell(idx);
      const made = nb.insertCell(idx, json as any);
      return { cell_id: made.id, op: e.op, version: cellVersion(e.cell_type, e.source!) };
    }
    cell.setSource(e.source!);
    return { cell_id: cell.id, op: e.op, version: versionOf(cell) };
  }

  private _newCell(cellType: string, source: string): any {
    const base: { [key: string]: unknown } = { cell_type: cellType, source, metadata: {} };
    if (cellType === 'code') {
      base['outputs'] = [];
      base['execution_count'] = null;
    }
    return base;
  }

  private _onUndoStack = (): void => {
    const um = this.state.notebook.undoManager;
    const top = um.undoStack[um.undoStack.length - 1] ?? null;
    if (this._undoItem !== null && top !== this._undoItem) {
      this._undoItem = null;
    }
    this.state.panel.content.node.classList.toggle('ws-live-undo', this._undoItem !== null);
  };

  /** Whether the newest undo step is an applied proposal (Ctrl+Z then reverts it). */
  get canUndo(): boolean {
    return this._undoItem !== null;
  }

  /** Reverts the newest applied proposal. */
  undo(): boolean {
    if (this._undoItem === null) {
      return false;
    }
    this._undoItem = null;
    this.state.panel.content.node.classList.remove('ws-live-undo');
    NotebookActions.undo(this.state.panel.content);
    return true;
  }

  // --- answering ------------------------------------------------------------------------------

  private _summary(p: IProposal): { [key: string]: unknown } {
    const statuses = p.edits.map(e => e.status);
    let status: string;
    if (statuses.some(s => s === 'pending')) {
      status = 'pending';
    } else if (statuses.every(s => s === 'applied')) {
      status = 'applied';
    } else if (statuses.every(s => s === 'rejected')) {
      status = 'rejected';
    } else if (!statuses.includes('applied') && statuses.includes('stale')) {
      status = 'stale';
    } else {
      status = 'partial';
    }
    return {
      proposal_id: p.id,
      status,
      auto: p.auto,
      cells: p.edits.map(e => e.outcome ?? this._outcome(e))
    };
  }

  private _close(p: IProposal): void {
    this._open.delete(p.id);
    p.widgets.forEach(w => w.dispose());
    p.widgets = [];
    this.send({ event: 'proposal', outcome: this._summary(p) });
  }

  private _record(p: IProposal, received: number, visible: number | null, applied: number | null): void {
    this.timings.push({ id: p.id, received, visible, decided: applied, applied });
    if (this.timings.length > 1000) {
      this.timings.shift();
    }
  }

  // --- drawing --------------------------------------------------------------------------------

  private _scheduleRender(): void {
    if (this._renderQueued || this._open.size === 0) {
      return;
    }
    this._renderQueued = true;
    setTimeout(() => {
      this._renderQueued = false;
      for (const p of this._open.values()) {
        this._render(p);
      }
    }, 0);
  }

  private _scheduleStaleCheck(): void {
    if (this._staleQueued || this._open.size === 0) {
      return;
    }
    this._staleQueued = true;
    requestAnimationFrame(() => {
      this._staleQueued = false;
      for (const p of this._open.values()) {
        for (const w of p.widgets) {
          const n = Number(w.node.dataset['wsEdit']);
          const e = p.edits.find(x => x.n === n);
          if (e) {
            w.node.classList.toggle('ws-live-changed', this._staleReason(p, e) !== null);
          }
        }
      }
    });
  }

  /** (Re)draws the pending edits of ``p`` in their cells (cells are rebuilt when moved or retyped). */
  private _render(p: IProposal): void {
    p.widgets.forEach(w => w.dispose());
    p.widgets = [];
    const pending = p.edits.filter(e => e.status === 'pending');
    const many = p.edits.length > 1;
    pending.forEach((e, i) => {
      const node = document.createElement('section');
      node.className = `ws-live-edit ws-live-op-${e.op}`;
      node.dataset['wsProposal'] = p.id;
      node.dataset['wsEdit'] = String(e.n);
      node.setAttribute('aria-label', `Agent proposal ${p.id}: ${this._label(e)}`);
      isolate(node);
      if (i === 0 && many) {
        node.appendChild(this._header(p, pending.length));
      }
      const head = document.createElement('div');
      head.className = 'ws-live-edit-head';
      head.appendChild(text('span', 'ws-live-title', many ? this._label(e) : `Agent proposal ${p.id}: ${this._label(e)}`));
      const actions = document.createElement('span');
      actions.className = 'ws-live-actions';
      actions.append(
        button('Accept', many ? 'Apply this change only' : 'Apply the proposed change', () => this.decide(p.id, many ? e.n : null, true), 'ws-live-accept'),
        button('Reject', many ? 'Drop this change only' : 'Drop the proposed change', () => this.decide(p.id, many ? e.n : null, false), 'ws-live-reject')
      );
      head.appendChild(actions);
      node.appendChild(head);
      node.appendChild(this._body(e));
      const widget = this._place(e, node);
      if (widget) {
        p.widgets.push(widget);
      }
    });
    this._scheduleStaleCheck();
  }

  private _header(p: IProposal, pending: number): HTMLElement {
    const head = document.createElement('div');
    head.className = 'ws-live-proposal-head';
    head.appendChild(text('span', 'ws-live-title', `Agent proposal ${p.id}: ${pending} of ${p.edits.length} changes to review`));
    const actions = document.createElement('span');
    actions.className = 'ws-live-actions ws-live-proposal-actions';
    actions.append(
      button('Accept', 'Apply every change of this proposal (one undo step)', () => this.decide(p.id, null, true), 'ws-live-accept'),
      button('Reject', 'Drop every change of this proposal', () => this.decide(p.id, null, false), 'ws-live-reject')
    );
    head.appendChild(actions);
    return head;
  }

  private _label(e: IEdit): string {
    switch (e.op) {
      case 'replace':
        return e.cell_type ? `change cell ${e.cell_id} (to a ${e.cell_type} cell)` : `change cell ${e.cell_id}`;
      case 'delete':
        return `delete cell ${e.cell_id}`;
      case 'move':
        return e.after ? `move cell ${e.cell_id} after cell ${e.after}` : `move cell ${e.cell_id} to the top`;
      default:
        return e.after ? `new ${e.cell_type} cell after cell ${e.after}` : `new ${e.cell_type} cell at the top`;
    }
  }

  private _body(e: IEdit): HTMLElement {
    if (e.op === 'insert') {
      return linesView('add', e.source!);
    }
    const idx = this.state.indexOf(e.cell_id!);
    const current = idx >= 0 ? this.state.notebook.cells[idx].getSource() : '';
    if (e.op === 'delete') {
      return linesView('del', current);
    }
    if (e.op === 'move') {
      return text('div', 'ws-live-diff ws-live-move-note', 'The cell moves; its source is unchanged.');
    }
    return diffView(current, e.source!);
  }

  private _place(e: IEdit, node: HTMLElement): Widget | null {
    const s = this.state;
    if (e.op === 'insert') {
      const anchor = e.after ? s.widget(e.after) : s.panel.content.widgets[0];
      if (!anchor) {
        return null;
      }
      return attachToCell(anchor, node, e.after ? undefined : 0);
    }
    const cell = s.widget(e.cell_id!);
    return cell ? attachToCell(cell, node, 1) : null;
  }

  /** Marks the cells an accept-mode proposal changed (until the user edits them or dismisses it). */
  private _markApplied(p: IProposal): void {
    for (const e of p.edits) {
      const id = e.outcome?.['cell_id'];
      if (e.status !== 'applied' || e.op === 'delete' || typeof id !== 'string') {
        continue;
      }
      const cell = this.state.widget(id);
      if (!cell) {
        continue;
      }
      const node = document.createElement('div');
      node.className = 'ws-live-applied';
      isolate(node);
      node.appendChild(text('span', 'ws-live-title', `Applied without review: agent proposal ${p.id} (${this._label(e)}) — Undo reverts it`));
      const version = versionOf(this.state.notebook.cells[this.state.indexOf(id)]);
      const widget = attachToCell(cell, node, 1);
      node.appendChild(button('Dismiss', 'Hide this marker', () => widget.dispose(), 'ws-live-dismiss'));
      const onChange = () => {
        const idx = this.state.indexOf(id);
        if (idx < 0 || versionOf(this.state.notebook.cells[idx]) !== version) {
          widget.dispose();
        }
      };
      cell.model.contentChanged.connect(onChange);
      widget.disposed.connect(() => cell.model.contentChanged.disconnect(onChange));
    }
  }

  private _open = new Map<string, IProposal>();
  private _count = 0;
  private _tag = Math.floor(Math.random() * 0xffff).toString(16).padStart(4, '0');
  private _renderQueued = false;
  private _staleQueued = false;
  private _undoItem: unknown = null;
}
