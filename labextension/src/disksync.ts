/**
 * Disk edits reach the open tab: when the notebook's file changes on disk (the agent's file tools,
 * a notebook run that writes outputs back), the tab takes the change cell by cell, by cell id.
 *
 * The page keeps what the file held when it last knew it (loaded, saved, or merged here). A cell
 * the file changed and the user did not is updated in place; a cell the user changed and did not
 * save yet keeps the user's version (and stays unsaved); a cell the user is typing in or that runs
 * is left alone; cells the file added are inserted where the file has them, cells it removed are
 * removed unless the user changed them. The document's record of the file is then moved to the
 * new file, so the next save neither conflicts nor asks "file changed on disk". The merge is not an
 * undo step of the user's.
 *
 * With real-time collaboration the Jupyter server itself loads outside changes into the shared
 * document, so this is off there.
 */

import type { ISharedCell, YNotebook } from '@jupyter/ydoc';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Contents } from '@jupyterlab/services';

import { ISavedCell, jsonDigest, NotebookState, savedForm, versionOf } from './state';
import { cellVersion } from './hash';

type JSONObject = { [key: string]: unknown };

/** Larger notebooks are not merged (the user gets JupyterLab's own conflict handling). */
const MAX_MERGE_BYTES = 32 << 20;

export interface IMergeReport {
  updated: string[];
  inserted: string[];
  deleted: string[];
  kept: string[];
}

function diskForm(cell: JSONObject): ISavedCell {
  const source = Array.isArray(cell['source']) ? (cell['source'] as string[]).join('') : String(cell['source'] ?? '');
  return {
    version: cellVersion(String(cell['cell_type']), source),
    outputs: jsonDigest(cell['outputs'] ?? []),
    metadata: jsonDigest(cell['metadata'] ?? {})
  };
}

function plain(cell: JSONObject): JSONObject {
  const out: JSONObject = { ...cell };
  if (Array.isArray(out['source'])) {
    out['source'] = (out['source'] as string[]).join('');
  }
  return out;
}

export class DiskSync {
  constructor(
    private readonly state: NotebookState,
    private readonly contents: Contents.IManager,
    private readonly interval = 1000
  ) {
    const context = state.panel.context;
    context.saveState.connect((_, s) => {
      this._saving = s === 'started';
    });
    void context.ready.then(() => {
      if (!state.panel.content.model?.collaborative) {
        this._timer = window.setInterval(() => void this.check(), this.interval);
      }
    });
    state.panel.disposed.connect(() => this.dispose());
  }

  /** The latest merges (newest last), for tests and the status of the page. */
  readonly reports: IMergeReport[] = [];

  get panel(): NotebookPanel {
    return this.state.panel;
  }

  dispose(): void {
    window.clearInterval(this._timer);
  }

  /** Looks at the file once; merges it when it changed. */
  async check(): Promise<IMergeReport | null> {
    const context = this.panel.context;
    const known = context.contentsModel;
    if (this._busy || this._saving || !known || this.panel.isDisposed) {
      return null;
    }
    this._busy = true;
    try {
      const head = await this.contents.get(context.path, { content: false, hash: true });
      const changed = known.hash && head.hash ? head.hash !== known.hash : head.last_modified !== known.last_modified;
      if (!changed || this._saving || head.type !== 'notebook' || (head.size ?? 0) > MAX_MERGE_BYTES) {
        return null;
      }
      const disk = await this.contents.get(context.path, { content: true, type: 'notebook', hash: true });
      const now = context.contentsModel;
      if (this._saving || now?.hash !== known.hash || now?.last_modified !== known.last_modified) {
        return null; // a save happened meanwhile: look again next time
      }
      const report = this.merge((disk.content ?? {}) as JSONObject);
      if (report === null) {
        return null;
      }
      // the document now knows this file: the next save writes over it without a conflict dialog
      (context as unknown as { _updateContentsModel(m: Contents.IModel): void })._updateContentsModel(disk);
      this.reports.push(report);
      if (this.reports.length > 100) {
        this.reports.shift();
      }
      return report;
    } catch {
      return null; // the file is gone or unreadable now: JupyterLab's own handling applies
    } finally {
      this._busy = false;
    }
  }

  /** Merges the file's notebook into the model (see the module docstring); null when it cannot. */
  merge(content: JSONObject): IMergeReport | null {
    const cells = content['cells'];
    if (!Array.isArray(cells) || !cells.every(c => c && typeof c === 'object' && typeof (c as JSONObject)['id'] === 'string')) {
      return null; // no cell ids (nbformat < 4.5): nothing to match cells by
    }
    const s = this.state;
    const nb: YNotebook = s.notebook;
    const base = s.saved;
    const report: IMergeReport = { updated: [], inserted: [], deleted: [], kept: [] };
    const diskIds = new Set((cells as JSONObject[]).map(c => c['id'] as string));
    const userChanged = (cell: ISharedCell, saved: ISavedCell | undefined) =>
      !saved || versionOf(cell) !== saved.version;
    const untouchable = (id: string) => s.isEditing(id) || s.isBusy(id);
    // one transaction per change: the model's cell list is refreshed only when a transaction ends,
    // and every index below is read from it (none of this is an undo step of the user's)
    const change = (f: () => void) => nb.transact(f, false);
    {
      // cells the file removed
      for (let i = nb.cells.length - 1; i >= 0; i--) {
        const cell = nb.cells[i];
        if (diskIds.has(cell.id) || !base.has(cell.id)) {
          continue; // still on disk, or new in the page (the user's)
        }
        if (userChanged(cell, base.get(cell.id)) || untouchable(cell.id)) {
          report.kept.push(cell.id);
        } else {
          change(() => nb.deleteCell(i));
          report.deleted.push(cell.id);
        }
      }
      // cells the file changed or added, in the file's order
      let previous: string | null = null;
      for (const raw of cells as JSONObject[]) {
        const id = raw['id'] as string;
        const disk = diskForm(raw);
        const saved = base.get(id);
        const idx = s.indexOf(id);
        if (idx < 0) {
          if (!saved) {
            const at: number = previous === null ? 0 : s.indexOf(previous) + 1;
            change(() => nb.insertCell(at, plain(raw) as any));
            report.inserted.push(id);
            previous = id;
          } // else: the user deleted it and has not saved: stays deleted
          continue;
        }
        previous = id;
        const cell = nb.cells[idx];
        if (!saved || (saved.version === disk.version && saved.outputs === disk.outputs && saved.metadata === disk.metadata)) {
          continue; // the file did not change this cell
        }
        if (untouchable(id)) {
          report.kept.push(id);
          continue;
        }
        const now = savedForm(cell);
        let touched = false;
        if (disk.version !== saved.version) {
          if (now.version !== saved.version) {
            report.kept.push(id); // the user's unsaved edit wins
            continue;
          }
          if (raw['cell_type'] !== cell.cell_type) {
            change(() => {
              nb.deleteCell(idx);
              nb.insertCell(idx, plain(raw) as any);
            });
            report.updated.push(id);
            continue;
          }
          change(() => cell.setSource(plain(raw)['source'] as string));
          touched = true;
        }
        if (disk.outputs !== saved.outputs && now.outputs === saved.outputs && cell.cell_type === 'code') {
          const code = cell as unknown as { setOutputs(o: unknown[]): void; execution_count: number | null };
          change(() => {
            code.setOutputs((raw['outputs'] as unknown[]) ?? []);
            code.execution_count = (raw['execution_count'] as number | null) ?? null;
          });
          touched = true;
        }
        if (disk.metadata !== saved.metadata && now.metadata === saved.metadata) {
          change(() => cell.setMetadata((raw['metadata'] ?? {}) as any));
          touched = true;
        }
        if (touched) {
          report.updated.push(id);
        }
      }
    }
    // the file is the new saved state; cells the user changed stay unsaved against it
    const next = new Map<string, ISavedCell>();
    for (const raw of cells as JSONObject[]) {
      next.set(raw['id'] as string, diskForm(raw));
    }
    s.saved = next;
    const now = nb.cells.map(c => [c.id, savedForm(c)] as const);
    const same =
      now.length === next.size &&
      now.every(([id, f]) => {
        const d = next.get(id);
        return d !== undefined && d.version === f.version && d.outputs === f.outputs && d.metadata === f.metadata;
      });
    this.panel.content.model!.dirty = !same;
    return report;
  }

  private _timer = 0;
  private _busy = false;
  private _saving = false;
}
