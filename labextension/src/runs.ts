/**
 * Runs the agent asks for.
 *
 * ``show_outputs``: code ran in the workspace's sandbox kernel; its outputs (made inert by the
 * Python side, and checked again here: only plain text, JSON, images and HTML that is a sandboxed
 * frame loading nothing or an image from data) go into the cell if the cell still has the version that ran, and the cell
 * is marked as showing sandbox outputs until the user runs it in their own kernel.
 *
 * ``run_user``: code runs in the user's own kernel — on the host, unsandboxed — so nothing runs
 * until the user presses Approve on the request drawn in the notebook (the code shown as text);
 * Deny runs nothing. The user can turn such requests off entirely. The kernel is usually busy with
 * the very cell that runs the agent, so approved cells run in a kernel subshell (same variables,
 * its own thread) when the kernel has subshells.
 */

import type { CodeCell } from '@jupyterlab/cells';
import { NotebookActions } from '@jupyterlab/notebook';
import type { Kernel } from '@jupyterlab/services';
import { KernelMessage } from '@jupyterlab/services';
import type { Widget } from '@lumino/widgets';

import { MAX_RUN_CELLS, MAX_SHOWN_OUTPUTS, MAX_TOKEN } from './limits';
import type { ISettings } from './read';
import { NotebookState, versionOf } from './state';
import { attachToCell, button, isolate, text } from './ui';

type JSONObject = { [key: string]: unknown };

const INERT = new Set(['text/plain', 'application/json', 'image/png', 'image/jpeg', 'image/gif', 'image/webp']);
export const SANDBOX_KEY = 'ws_jupyter';

/** Attributes each element of an inert HTML output may have. */
const HTML_ALLOWED: { [tag: string]: string[] } = {
  STYLE: [],
  IFRAME: ['sandbox', 'class', 'csp', 'srcdoc', 'style'],
  IMG: ['src', 'alt', 'style']
};

/**
 * Whether an HTML output is one of the inert forms the Python side makes of a sandbox's HTML (a
 * frame with ``sandbox=""`` and a policy that loads nothing, an image from a ``data:`` URI, a style
 * rule without ``url()``/``@import``), checked on a parsed copy (parsing runs and fetches nothing).
 */
export function inertHtml(html: string): boolean {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  const elements = [...Array.from(doc.head.children), ...Array.from(doc.body.children)];
  if (elements.length === 0 || doc.body.textContent?.trim()) {
    return false;
  }
  for (const el of elements) {
    const allowed = HTML_ALLOWED[el.tagName];
    if (!allowed || el.children.length > 0) {
      return false;
    }
    for (const attr of Array.from(el.attributes)) {
      if (!allowed.includes(attr.name) || /url\s*\(|expression\s*\(/i.test(attr.name === 'srcdoc' ? '' : attr.value)) {
        return false;
      }
    }
    if (el.tagName === 'STYLE' && /url\s*\(|@import/i.test(el.textContent ?? '')) {
      return false;
    }
    if (el.tagName === 'IFRAME' && (el.getAttribute('sandbox') !== '' || !/default-src 'none'/.test(el.getAttribute('csp') ?? ''))) {
      return false;
    }
    if (el.tagName === 'IMG' && !/^data:image\/[a-z+.-]+;base64,[A-Za-z0-9+/=]*$/.test(el.getAttribute('src') ?? '')) {
      return false;
    }
  }
  return true;
}

/** ``outputs`` with only inert MIME types (anything else is dropped), at most MAX_SHOWN_OUTPUTS. */
export function inertOutputs(outputs: unknown): JSONObject[] {
  if (!Array.isArray(outputs)) {
    return [];
  }
  const out: JSONObject[] = [];
  for (const o of outputs.slice(0, MAX_SHOWN_OUTPUTS) as JSONObject[]) {
    const type = o?.['output_type'];
    if (type === 'stream') {
      const name = o['name'] === 'stderr' ? 'stderr' : 'stdout';
      out.push({ output_type: 'stream', name, text: String(o['text'] ?? '') });
    } else if (type === 'error') {
      const tb = Array.isArray(o['traceback']) ? (o['traceback'] as unknown[]).map(String) : [];
      out.push({ output_type: 'error', ename: String(o['ename'] ?? 'Error'), evalue: String(o['evalue'] ?? ''), traceback: tb });
    } else if (type === 'display_data' || type === 'execute_result') {
      const data: JSONObject = {};
      for (const [mime, value] of Object.entries((o['data'] ?? {}) as JSONObject)) {
        if (INERT.has(mime) || (mime === 'text/html' && typeof value === 'string' && inertHtml(value))) {
          data[mime] = value;
        }
      }
      if (!('text/plain' in data)) {
        data['text/plain'] = '[output not shown]';
      }
      const item: JSONObject = { output_type: type, data, metadata: {} };
      if (type === 'execute_result') {
        item['execution_count'] = typeof o['execution_count'] === 'number' ? o['execution_count'] : null;
      }
      out.push(item);
    }
  }
  return out;
}

interface IRun {
  id: string;
  cells: string[];
  versions: { [id: string]: string };
  widget: Widget | null;
  status: string;
}

export class Runs {
  constructor(
    private readonly state: NotebookState,
    private readonly send: (message: JSONObject) => void,
    private readonly settings: () => ISettings
  ) {
    NotebookActions.executionScheduled.connect((_, args) => {
      if (args.notebook === state.panel.content) {
        this._clearMark(args.cell.model.id);
      }
    });
    state.panel.content.model!.cells.changed.connect(() => setTimeout(() => this._redrawMarks(), 0));
    void state.panel.context.ready.then(() => this._redrawMarks());
  }

  /** ``show_outputs``: the sandbox's outputs into a cell that still has the version that ran. */
  showOutputs(args: JSONObject): JSONObject {
    const id = args['cell_id'];
    if (typeof id !== 'string' || typeof args['version'] !== 'string') {
      throw new Error('show_outputs needs cell_id and version');
    }
    const idx = this.state.indexOf(id);
    if (idx < 0) {
      return { status: 'stale' };
    }
    const shared = this.state.notebook.cells[idx];
    if (versionOf(shared) !== args['version'] || shared.cell_type !== 'code' || this.state.isBusy(id)) {
      return { status: 'stale' };
    }
    const origin = (args['origin'] ?? {}) as JSONObject;
    const mark = {
      where: 'sandbox',
      kernel: String(origin['kernel'] ?? 'default').slice(0, MAX_TOKEN),
      status: String(origin['status'] ?? '').slice(0, 32),
      at: String(origin['at'] ?? '').slice(0, 64)
    };
    const outputs = inertOutputs(args['outputs']);
    this.state.notebook.transact(() => {
      const code = shared as unknown as { setOutputs(o: unknown[]): void; execution_count: number | null };
      code.setOutputs(outputs);
      code.execution_count = null;
      shared.setMetadata(SANDBOX_KEY, { outputs_from: mark });
    }, false);
    // every output was just replaced by one checked inert above: trusting them lets JupyterLab draw
    // the sandboxed frame (its sanitizer would drop the frame of an untrusted cell, showing nothing)
    const model = this.state.widget(id)?.model;
    if (model) {
      model.trusted = true;
    }
    this._drawMark(id);
    return { status: 'shown' };
  }

  /** ``run_user``: asks the user, then runs the cells in the user's kernel. */
  runUser(args: JSONObject): JSONObject {
    const id = `U${++this._count}-${this._tag}`;
    if (this.settings().userRuns === 'off') {
      return { run_id: id, status: 'off', message: 'the user turned off runs in their kernel' };
    }
    const ids = args['cell_ids'];
    const versions = (args['versions'] ?? {}) as { [id: string]: string };
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_RUN_CELLS || !ids.every(i => typeof i === 'string')) {
      return { run_id: id, status: 'error', message: `cell_ids must list 1 to ${MAX_RUN_CELLS} cells` };
    }
    const stale = this._staleCells(ids, versions);
    if (stale) {
      return { run_id: id, status: 'stale', message: stale };
    }
    const run: IRun = { id, cells: ids, versions, widget: null, status: 'pending' };
    this._open.set(id, run);
    this._drawRequest(run);
    return { run_id: id, status: 'pending' };
  }

  /** The user's answer to a request (the buttons call this). */
  async decide(id: string, approve: boolean): Promise<void> {
    const run = this._open.get(id);
    if (!run || run.status !== 'pending') {
      return;
    }
    run.widget?.dispose();
    run.widget = null;
    if (!approve) {
      this._finish(run, { status: 'denied' });
      return;
    }
    const stale = this._staleCells(run.cells, run.versions);
    if (stale) {
      this._finish(run, { status: 'stale', message: stale });
      return;
    }
    run.status = 'running';
    try {
      const cells = await this._execute(run);
      this._finish(run, { status: 'done', cells });
    } catch (err) {
      this._finish(run, { status: 'error', message: String((err as Error)?.message ?? err).slice(0, 2000) });
    }
  }

  dispose(): void {
    for (const run of this._open.values()) {
      run.widget?.dispose();
    }
    this._open.clear();
  }

  private _staleCells(ids: string[], versions: { [id: string]: string }): string | null {
    for (const cid of ids) {
      const idx = this.state.indexOf(cid);
      if (idx < 0) {
        return `no cell ${cid} in the notebook`;
      }
      const cell = this.state.notebook.cells[idx];
      if (cell.cell_type !== 'code') {
        return `cell ${cid} is a ${cell.cell_type} cell`;
      }
      if (versions[cid] !== undefined && versionOf(cell) !== versions[cid]) {
        return `cell ${cid} changed since the agent read it`;
      }
    }
    return null;
  }

  private _finish(run: IRun, outcome: JSONObject): void {
    run.status = String(outcome['status']);
    this._open.delete(run.id);
    this.send({ event: 'run', outcome: { run_id: run.id, ...outcome } });
  }

  private _drawRequest(run: IRun): void {
    const first = this.state.widget(run.cells[0]);
    if (!first) {
      return;
    }
    const node = document.createElement('section');
    node.className = 'ws-live-run-request';
    node.dataset['wsRun'] = run.id;
    node.setAttribute('aria-label', `Agent request ${run.id} to run cells in your kernel`);
    isolate(node);
    node.appendChild(text('div', 'ws-live-title', `The agent asks to run ${run.cells.length === 1 ? 'this cell' : `${run.cells.length} cells`} in your kernel (not sandboxed: it can do anything you can)`));
    for (const cid of run.cells) {
      const idx = this.state.indexOf(cid);
      node.appendChild(text('div', 'ws-live-run-cell', `cell ${cid} [${idx}]`));
      node.appendChild(text('pre', 'ws-live-run-code', this.state.notebook.cells[idx].getSource().slice(0, 20_000)));
    }
    const actions = document.createElement('div');
    actions.className = 'ws-live-actions';
    actions.append(
      button('Approve', 'Run these cells in your kernel', () => void this.decide(run.id, true), 'ws-live-accept'),
      button('Deny', 'Run nothing', () => void this.decide(run.id, false), 'ws-live-reject')
    );
    node.appendChild(actions);
    run.widget = attachToCell(first, node, 1);
  }

  /** Runs the cells one after the other in the user's kernel; stops at the first error. */
  private async _execute(run: IRun): Promise<JSONObject[]> {
    const kernel = this.state.panel.sessionContext.session?.kernel;
    if (!kernel) {
      throw new Error('the notebook has no kernel');
    }
    const results: JSONObject[] = [];
    let failed = false;
    for (const cid of run.cells) {
      const idx = this.state.indexOf(cid);
      const widget = this.state.widget(cid) as CodeCell | undefined;
      if (idx < 0 || !widget) {
        continue;
      }
      if (failed) {
        results.push(this._result(cid, 'skipped'));
        continue;
      }
      const ok = await this._executeOne(kernel, widget);
      results.push(this._result(cid, ok ? 'ok' : 'error'));
      failed = !ok;
    }
    return results;
  }

  private _result(cid: string, status: string): JSONObject {
    const idx = this.state.indexOf(cid);
    const cell = this.state.notebook.cells[idx];
    const raw = cell.toJSON() as JSONObject;
    return {
      index: idx,
      id: cid,
      cell_type: cell.cell_type,
      source: cell.getSource(),
      version: versionOf(cell),
      execution_count: typeof raw['execution_count'] === 'number' ? raw['execution_count'] : null,
      outputs: raw['outputs'] ?? [],
      status
    };
  }

  private async _subshell(kernel: Kernel.IKernelConnection): Promise<string | null> {
    await kernel.info;
    if (!kernel.supportsSubshells) {
      return null;
    }
    if (this._subshellKernel !== kernel.id || this._subshellId === null) {
      const reply = await kernel.requestCreateSubshell({}).done;
      this._subshellId = reply.content.subshell_id;
      this._subshellKernel = kernel.id;
    }
    return this._subshellId;
  }

  /** One cell in the user's kernel, its outputs into the cell as they come. */
  private async _executeOne(kernel: Kernel.IKernelConnection, cell: CodeCell): Promise<boolean> {
    const model = cell.model;
    const subshell = await this._subshell(kernel);
    this.state.markPending(model.id, true);
    model.outputs.clear();
    model.executionCount = null;
    model.executionState = 'running';
    const msg = KernelMessage.createMessage({
      msgType: 'execute_request',
      channel: 'shell',
      username: kernel.username,
      session: kernel.clientId,
      subshellId: subshell,
      content: {
        code: model.sharedModel.getSource(),
        silent: false,
        store_history: true,
        user_expressions: {},
        allow_stdin: false,
        stop_on_error: true
      },
      metadata: { cellId: model.id, ws_jupyter: 'user-run' }
    });
    const future = kernel.sendShellMessage(msg, true, true) as Kernel.IShellFuture<KernelMessage.IExecuteRequestMsg, KernelMessage.IExecuteReplyMsg>;
    future.onIOPub = (m: KernelMessage.IIOPubMessage) => {
      const type = m.header.msg_type;
      const content = m.content as JSONObject;
      if (type === 'execute_input') {
        model.executionCount = (content['execution_count'] as number) ?? null;
      } else if (type === 'clear_output') {
        model.outputs.clear(Boolean(content['wait']));
      } else if (type === 'stream' || type === 'display_data' || type === 'execute_result' || type === 'error') {
        model.outputs.add({ output_type: type, ...content } as any);
      }
    };
    try {
      const reply = await future.done;
      return reply.content.status === 'ok';
    } finally {
      model.executionState = 'idle';
      this.state.markPending(model.id, false);
    }
  }

  // --- the sandbox mark ---------------------------------------------------------------------

  private _drawMark(id: string): void {
    const cell = this.state.widget(id);
    if (!cell) {
      return;
    }
    const old = this._marks.get(id);
    if (old && !old.isDisposed) {
      old.dispose();
    }
    const meta = cell.model.getMetadata(SANDBOX_KEY) as { outputs_from?: JSONObject } | undefined;
    const from = meta?.outputs_from;
    if (!from) {
      return;
    }
    const node = document.createElement('div');
    node.className = 'ws-live-sandbox-mark';
    node.setAttribute('role', 'note');
    node.textContent = `Outputs from the workspace sandbox (kernel ${String(from['kernel'] ?? 'default')}${from['at'] ? ', ' + String(from['at']) : ''}), not from your kernel`;
    const layout = cell.layout as unknown as { widgets: readonly Widget[] };
    const widget = attachToCell(cell, node, Math.min(2, layout.widgets.length)); // above the outputs
    this._marks.set(id, widget);
  }

  private _redrawMarks(): void {
    for (const cell of this.state.panel.content.widgets) {
      const mark = this._marks.get(cell.model.id);
      const has = Boolean((cell.model.getMetadata(SANDBOX_KEY) as { outputs_from?: unknown } | undefined)?.outputs_from);
      if (has && (!mark || mark.isDisposed)) {
        this._drawMark(cell.model.id);
      }
    }
  }

  private _clearMark(id: string): void {
    const idx = this.state.indexOf(id);
    if (idx >= 0) {
      const cell = this.state.notebook.cells[idx];
      if (cell.getMetadata(SANDBOX_KEY) !== undefined) {
        cell.deleteMetadata(SANDBOX_KEY);
      }
    }
    this._marks.get(id)?.dispose();
    this._marks.delete(id);
  }

  private _open = new Map<string, IRun>();
  private _marks = new Map<string, Widget>();
  private _count = 0;
  private _tag = Math.floor(Math.random() * 0xffff).toString(16).padStart(4, '0');
  private _subshellId: string | null = null;
  private _subshellKernel: string | null = null;
}
