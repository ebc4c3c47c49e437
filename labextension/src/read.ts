/**
 * The ``read`` request: the notebook as the user sees it now, with each cell's version and the
 * notebook's state (active cell, unsaved cells, running and queued cells, the kernel, the user's
 * settings). Bounded: at most MAX_READ_CELLS cells, and output values over MAX_OUTPUT_VALUE (or
 * past MAX_READ_OUTPUT_BYTES in all) are named with their size instead of sent.
 */

import type { ISharedCell } from '@jupyter/ydoc';

import { MAX_OUTPUT_VALUE, MAX_READ_CELLS, MAX_READ_OUTPUT_BYTES, MAX_TOKEN } from './limits';
import { NotebookState, versionOf } from './state';

export interface ISettings {
  mode: 'review' | 'accept';
  userRuns: 'ask' | 'off';
}

type JSONObject = { [key: string]: unknown };

function boundedOutputs(raw: unknown, budget: { left: number }): JSONObject[] {
  if (!Array.isArray(raw)) {
    return [];
  }
  const out: JSONObject[] = [];
  for (const o of raw as JSONObject[]) {
    const copy: JSONObject = { ...o };
    const data = o['data'];
    if (data && typeof data === 'object') {
      const kept: JSONObject = {};
      for (const [mime, value] of Object.entries(data as JSONObject)) {
        const size = typeof value === 'string' ? value.length : JSON.stringify(value ?? null).length;
        if (size > MAX_OUTPUT_VALUE || size > budget.left) {
          kept['text/plain'] = kept['text/plain'] ?? `[${mime} output of ${size} bytes not sent]`;
          continue;
        }
        budget.left -= size;
        kept[mime] = value;
      }
      copy['data'] = kept;
    }
    const text = o['text'];
    if (typeof text === 'string' || Array.isArray(text)) {
      const joined = Array.isArray(text) ? text.join('') : text;
      if (joined.length > budget.left) {
        copy['text'] = joined.slice(0, Math.max(0, budget.left)) + `\n[${joined.length} characters in all]`;
        budget.left = 0;
      } else {
        budget.left -= joined.length;
        copy['text'] = joined;
      }
    }
    out.push(copy);
  }
  return out;
}

function cellWire(cell: ISharedCell, index: number, budget: { left: number }): JSONObject {
  const raw = cell.toJSON() as JSONObject;
  return {
    index,
    id: cell.id,
    cell_type: cell.cell_type,
    source: cell.getSource(),
    version: versionOf(cell),
    execution_count: typeof raw['execution_count'] === 'number' ? raw['execution_count'] : null,
    outputs: cell.cell_type === 'code' ? boundedOutputs(raw['outputs'], budget) : []
  };
}

/** The reply to a read: ``cell_ids`` (in notebook order) or ``offset``/``limit``. */
export function readNotebook(state: NotebookState, settings: ISettings, args: JSONObject): JSONObject {
  const nb = state.notebook;
  const cells = nb.cells;
  const budget = { left: MAX_READ_OUTPUT_BYTES };
  const chosen: JSONObject[] = [];
  let missing: string[] = [];
  const ids = args['cell_ids'];
  if (Array.isArray(ids)) {
    const wanted = new Set(ids.filter(i => typeof i === 'string' && i.length <= MAX_TOKEN).slice(0, MAX_READ_CELLS));
    cells.forEach((cell, index) => {
      if (wanted.has(cell.id)) {
        chosen.push(cellWire(cell, index, budget));
        wanted.delete(cell.id);
      }
    });
    missing = [...wanted];
  } else {
    const offset = Math.max(0, Number(args['offset']) || 0);
    const limit = Math.min(MAX_READ_CELLS, Math.max(1, Number(args['limit']) || MAX_READ_CELLS));
    for (let i = offset; i < Math.min(cells.length, offset + limit); i++) {
      chosen.push(cellWire(cells[i], i, budget));
    }
  }
  const active = state.active();
  const unsaved = state.unsaved();
  const kernel = state.panel.sessionContext.session?.kernel;
  const language = (nb.getMetadata('kernelspec') as { language?: string } | undefined)?.language;
  return {
    path: state.panel.context.path,
    total: cells.length,
    cells: chosen,
    missing,
    language: typeof language === 'string' ? language : null,
    active: active.id,
    editing: active.editing,
    unsaved: unsaved.slice(0, MAX_READ_CELLS),
    unsaved_total: unsaved.length,
    deleted_since_save: state.deletedSinceSave(),
    running: state.running,
    queued: state.queued(),
    // a subshell's messages flip the status to idle while the main shell still runs a cell
    kernel: state.running !== null || state.queued().length > 0 ? 'busy' : kernel?.status ?? 'none',
    mode: settings.mode,
    user_runs: settings.userRuns,
    has_ids: nb.nbformat > 4 || (nb.nbformat === 4 && nb.nbformat_minor >= 5)
  };
}
