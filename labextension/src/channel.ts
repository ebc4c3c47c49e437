/**
 * The page's end of the live link: the comm the ``%ws`` extension in the notebook's kernel opens.
 *
 * The kernel opens the comm (target ``ws_jupyter.live``); the page moves it to a kernel subshell
 * before it answers, so its messages reach the kernel while the main shell runs a cell (the agent
 * loop that waits for them), then says hello with its id, the notebook's path and the user's
 * settings. Each request (``{id, to, op, args}``) gets one reply (``{re, from, ok, result|error}``);
 * the user's decisions go out as events. A request addressed to another page (the same kernel open
 * in two windows) is ignored. On leaving the page it says goodbye, so the kernel stops waiting.
 *
 * The user's settings — review or accept mode, whether the agent may ask to run cells in the
 * user's kernel — change only from the notebook: the toolbar, or the ``%ws live`` magic, which
 * uses the ``settings`` request. No agent tool sends it.
 */

import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { CommsOverSubshells } from '@jupyterlab/services';
import { Signal } from '@lumino/signaling';

import { PROTOCOL, TARGET } from './limits';
import { Proposals } from './proposals';
import { ISettings, readNotebook } from './read';
import { Runs } from './runs';
import { NotebookState } from './state';

type JSONObject = { [key: string]: unknown };

/** The extension's version, said in the hello. */
export const VERSION = '0.1.0';

export class LiveChannel {
  constructor(
    readonly panel: NotebookPanel,
    defaults: ISettings
  ) {
    this.settings = { ...defaults };
    this.state = new NotebookState(panel);
    const send = (m: JSONObject) => this.send(m);
    this.proposals = new Proposals(this.state, send, () => this.settings);
    this.runs = new Runs(this.state, send, () => this.settings);
    panel.sessionContext.kernelChanged.connect((_, change) => this._register(change.newValue));
    this._register(panel.sessionContext.session?.kernel ?? null);
    panel.context.pathChanged.connect(() => this.send({ event: 'settings', path: panel.context.path }));
    window.addEventListener('pagehide', this._bye);
    panel.disposed.connect(() => this.dispose());
  }

  readonly id = `page-${Math.random().toString(16).slice(2, 10)}`;
  readonly state: NotebookState;
  readonly proposals: Proposals;
  readonly runs: Runs;
  settings: ISettings;
  /** Emits when the settings change (the toolbar redraws). */
  readonly settingsChanged = new Signal<this, ISettings>(this);

  /** Whether a kernel's ws-jupyter extension is connected through this page. */
  get connected(): boolean {
    return this._comm !== null && !this._comm.isDisposed;
  }

  /** Sends one message to the kernel (dropped when not connected). */
  send(message: JSONObject): void {
    const comm = this._comm;
    if (comm && !comm.isDisposed) {
      comm.send({ ...message, from: this.id } as any);
    }
  }

  /** The user changed a setting (toolbar, magic): applied and told to the kernel. */
  setSettings(change: Partial<ISettings>): ISettings {
    if (change.mode === 'review' || change.mode === 'accept') {
      this.settings.mode = change.mode;
    }
    if (change.userRuns === 'ask' || change.userRuns === 'off') {
      this.settings.userRuns = change.userRuns;
    }
    this.settingsChanged.emit(this.settings);
    this.send({ event: 'settings', mode: this.settings.mode, user_runs: this.settings.userRuns });
    return this.settings;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._bye();
    window.removeEventListener('pagehide', this._bye);
    this.proposals.dispose();
    this.runs.dispose();
    this._kernel?.removeCommTarget(TARGET, this._onOpen);
  }

  private _bye = (): void => {
    this.send({ event: 'bye' });
  };

  private _register(kernel: Kernel.IKernelConnection | null): void {
    if (this._kernel) {
      this._kernel.removeCommTarget(TARGET, this._onOpen);
    }
    this._kernel = kernel;
    this._comm = null;
    kernel?.registerCommTarget(TARGET, this._onOpen);
  }

  private _onOpen = (comm: Kernel.IComm, msg: KernelMessage.ICommOpenMsg): void => {
    // not awaited: JupyterLab pauses the kernel's messages until a comm target's promise settles,
    // and the subshell this waits for arrives as one of those messages
    void this._connect(comm, msg);
  };

  private async _connect(comm: Kernel.IComm, msg: KernelMessage.ICommOpenMsg): Promise<void> {
    const kernel = this._kernel;
    const data = (msg.content.data ?? {}) as JSONObject;
    if (!kernel || data['protocol'] !== PROTOCOL) {
      comm.close();
      return;
    }
    await kernel.info;
    const subshells = kernel.supportsSubshells;
    if (subshells) {
      // the page's messages go through a subshell: the kernel reads them while a cell runs
      const handler = comm as Kernel.IComm & { commsOverSubshells?: CommsOverSubshells; subshellStarted?: Promise<void> };
      if (handler.commsOverSubshells === CommsOverSubshells.Disabled || handler.commsOverSubshells === undefined) {
        handler.commsOverSubshells = CommsOverSubshells.PerCommTarget;
      }
      await handler.subshellStarted;
    }
    const previous = this._comm;
    this._comm = comm;
    if (previous && previous !== comm && !previous.isDisposed) {
      previous.dispose();
    }
    comm.onMsg = m => this._onMsg(comm, m);
    comm.onClose = () => {
      if (this._comm === comm) {
        this._comm = null;
      }
    };
    comm.send({
      hello: {
        frontend: this.id,
        nonce: data['nonce'],
        path: this.panel.context.path,
        subshells,
        version: VERSION,
        app: 'JupyterLab',
        mode: this.settings.mode,
        user_runs: this.settings.userRuns
      }
    } as any);
  }

  private _onMsg(comm: Kernel.IComm, msg: KernelMessage.ICommMsgMsg): void {
    const data = (msg.content.data ?? {}) as JSONObject;
    if (comm !== this._comm || data['to'] !== this.id || typeof data['id'] !== 'string') {
      return;
    }
    const reply = (body: JSONObject) => comm.send({ re: data['id'], from: this.id, ...body } as any);
    try {
      const result = this._handle(String(data['op']), (data['args'] ?? {}) as JSONObject);
      reply({ ok: true, result });
    } catch (err) {
      reply({ ok: false, error: { message: String((err as Error)?.message ?? err).slice(0, 2000) } });
    }
  }

  private _handle(op: string, args: JSONObject): JSONObject {
    switch (op) {
      case 'read':
        return readNotebook(this.state, this.settings, args);
      case 'propose':
        return this.proposals.propose(args);
      case 'show_outputs':
        return this.runs.showOutputs(args);
      case 'run_user':
        return this.runs.runUser(args);
      case 'settings': {
        const s = this.setSettings({
          mode: args['mode'] as ISettings['mode'],
          userRuns: args['user_runs'] as ISettings['userRuns']
        });
        return { mode: s.mode, user_runs: s.userRuns };
      }
      default:
        throw new Error(`unknown request ${op.slice(0, 40)}`);
    }
  }

  private _kernel: Kernel.IKernelConnection | null = null;
  private _comm: Kernel.IComm | null = null;
  private _disposed = false;
}
