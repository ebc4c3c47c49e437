/**
 * What the page knows about one open notebook beyond its model: the cells as last saved (to tell
 * which ones the user changed since), which cell runs and which are queued, and whether the user
 * is typing in a cell right now.
 */

import type { Cell } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import type { ISharedCell, YNotebook } from '@jupyter/ydoc';

import { cellVersion, digest } from './hash';

/** The saved form of one cell: what the file on disk held the last time the page knew it. */
export interface ISavedCell {
  version: string;
  outputs: string;
  metadata: string;
}

/** A shared cell's source as a string. */
export function sourceOf(cell: ISharedCell): string {
  return cell.getSource();
}

/** A shared cell's version (type and source). */
export function versionOf(cell: ISharedCell): string {
  return cellVersion(String(cell.cell_type), cell.getSource());
}

/** A digest of a JSON value (outputs, metadata). */
export function jsonDigest(value: unknown): string {
  return digest(JSON.stringify(value ?? null));
}

/** The saved form of a shared cell as it is now. */
export function savedForm(cell: ISharedCell): ISavedCell {
  const raw = cell.toJSON() as { outputs?: unknown; metadata?: unknown };
  return { version: versionOf(cell), outputs: jsonDigest(raw.outputs ?? []), metadata: jsonDigest(raw.metadata ?? {}) };
}

export class NotebookState {
  constructor(readonly panel: NotebookPanel) {
    const context = panel.context;
    void context.ready.then(() => this.markSaved());
    context.saveState.connect((_, state) => {
      if (state === 'started') {
        this._saving = this.snapshot();
      } else if (state === 'completed' && this._saving) {
        this.saved = this._saving;
        this._saving = null;
      } else if (state === 'failed') {
        this._saving = null;
      }
    });
    panel.sessionContext.kernelChanged.connect((_, change) => this._watch(change.newValue));
    this._watch(panel.sessionContext.session?.kernel ?? null);
  }

  /** The cells as last saved (id -> saved form), and their order. */
  saved = new Map<string, ISavedCell>();

  get notebook(): YNotebook {
    return this.panel.content.model!.sharedModel as YNotebook;
  }

  /** The saved forms of the model's cells right now. */
  snapshot(): Map<string, ISavedCell> {
    const out = new Map<string, ISavedCell>();
    for (const cell of this.notebook.cells) {
      out.set(cell.id, savedForm(cell));
    }
    return out;
  }

  /** The model as it is now is what the file holds. */
  markSaved(): void {
    this.saved = this.snapshot();
  }

  /** Cells whose type or source differ from the last save (new cells included), in order. */
  unsaved(): string[] {
    const out: string[] = [];
    for (const cell of this.notebook.cells) {
      const saved = this.saved.get(cell.id);
      if (!saved || saved.version !== versionOf(cell)) {
        out.push(cell.id);
      }
    }
    return out;
  }

  /** How many saved cells are gone from the model. */
  deletedSinceSave(): number {
    const ids = new Set(this.notebook.cells.map(c => c.id));
    let n = 0;
    for (const id of this.saved.keys()) {
      if (!ids.has(id)) {
        n++;
      }
    }
    return n;
  }

  /** The cell widget with this id, if any. */
  widget(id: string): Cell | undefined {
    return this.panel.content.widgets.find(w => w.model.id === id);
  }

  /** The index of the cell with this id in the model (-1: none). */
  indexOf(id: string): number {
    return this.notebook.cells.findIndex(c => c.id === id);
  }

  /** The id of the active cell, and whether the user is typing in it. */
  active(): { id: string | null; editing: boolean } {
    const nb = this.panel.content;
    const cell = nb.activeCell;
    if (!cell) {
      return { id: null, editing: false };
    }
    const editing = nb.mode === 'edit' || Boolean(cell.editor?.hasFocus());
    return { id: cell.model.id, editing };
  }

  /** Whether the user is typing in this cell now. */
  isEditing(id: string): boolean {
    const a = this.active();
    if (a.editing && a.id === id) {
      return true;
    }
    const w = this.widget(id);
    return Boolean(w?.editor?.hasFocus());
  }

  /** The cell running in the kernel now, if the page saw it start. */
  get running(): string | null {
    return this._running;
  }

  /** Cells waiting to run (scheduled, not started), in notebook order. */
  queued(): string[] {
    const out: string[] = [];
    for (const w of this.panel.content.widgets) {
      const id = w.model.id;
      const state = (w.model as { executionState?: string }).executionState;
      if (id !== this._running && (state === 'running' || this._pending.has(id))) {
        out.push(id);
      }
    }
    return out;
  }

  /** Whether this cell runs or waits to run. */
  isBusy(id: string): boolean {
    return id === this._running || this.queued().includes(id);
  }

  /** Cells the page itself runs in a subshell (the user's approved runs). */
  markPending(id: string, on: boolean): void {
    if (on) {
      this._pending.add(id);
    } else {
      this._pending.delete(id);
    }
  }

  private _watch(kernel: Kernel.IKernelConnection | null): void {
    if (this._kernel) {
      this._kernel.anyMessage.disconnect(this._onMessage, this);
    }
    this._kernel = kernel;
    this._requests.clear();
    this._running = null;
    if (kernel) {
      kernel.anyMessage.connect(this._onMessage, this);
    }
  }

  private _onMessage(_: Kernel.IKernelConnection, args: Kernel.IAnyMessageArgs): void {
    const msg = args.msg as KernelMessage.IMessage;
    const type = msg.header.msg_type;
    if (args.direction === 'send') {
      if (type === 'execute_request') {
        const cellId = (msg.metadata as { cellId?: unknown }).cellId;
        if (typeof cellId === 'string') {
          this._requests.set(msg.header.msg_id, cellId);
          if (this._requests.size > 10_000) {
            this._requests.delete(this._requests.keys().next().value as string);
          }
        }
      }
      return;
    }
    const parent = (msg.parent_header as { msg_id?: string }).msg_id;
    if (!parent || !this._requests.has(parent)) {
      return;
    }
    if (type === 'execute_input') {
      this._running = this._requests.get(parent) ?? null;
    } else if (type === 'execute_reply' || (type === 'status' && (msg.content as { execution_state?: string }).execution_state === 'idle')) {
      if (this._running === this._requests.get(parent)) {
        this._running = null;
      }
      if (type === 'execute_reply') {
        this._requests.delete(parent);
      }
    }
  }

  private _kernel: Kernel.IKernelConnection | null = null;
  private _requests = new Map<string, string>();
  private _running: string | null = null;
  private _pending = new Set<string>();
  private _saving: Map<string, ISavedCell> | null = null;
}
