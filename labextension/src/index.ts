/**
 * ws-jupyter in JupyterLab.
 *
 * - ``ws-jupyter:live``: the live link between the ``%ws`` extension in a notebook's kernel and the
 *   notebook (see channel.ts): the agent reads the notebook as the user sees it, proposes edits
 *   the user reviews as inline diffs (Accept / Reject), and runs cells in the workspace sandbox or,
 *   after the user approves, in the user's kernel. A toolbar switch shows and sets the review mode;
 *   Ctrl+Z in command mode reverts the last applied proposal in one step.
 * - disk edits of an open notebook merged into its tab cell by cell (disksync.ts);
 * - ``#cell-id=`` links that open a notebook at the cell on the first click (navigation.ts).
 */

import { IRouter, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ToolbarButton } from '@jupyterlab/apputils';
import { PageConfig } from '@jupyterlab/coreutils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { LiveChannel } from './channel';
import { DiskSync } from './disksync';
import { followCellFragments, followRoutedFragments } from './navigation';
import type { ISettings } from './read';

const PLUGIN_ID = 'ws-jupyter:live';
const UNDO_COMMAND = 'ws-jupyter:undo-agent-edit';

function modeButton(channel: LiveChannel): ToolbarButton {
  const label = () => (channel.settings.mode === 'accept' ? 'Agent edits: apply at once' : 'Agent edits: review');
  const tip = () =>
    channel.settings.mode === 'accept'
      ? 'Agent proposals apply at once, marked in the notebook. Click to review each one instead.'
      : 'Agent proposals wait for your Accept or Reject. Click to apply them at once instead.';
  const b = new ToolbarButton({
    className: 'ws-live-mode',
    label: label(),
    tooltip: tip(),
    onClick: () => {
      channel.setSettings({ mode: channel.settings.mode === 'accept' ? 'review' : 'accept' });
    }
  });
  channel.settingsChanged.connect(() => {
    // ToolbarButton keeps its props: rebuild its label in place
    const text = b.node.querySelector('.jp-ToolbarButtonComponent-label');
    if (text) {
      text.textContent = label();
    }
    b.node.title = tip();
    b.node.classList.toggle('ws-live-mode-accept', channel.settings.mode === 'accept');
  });
  return b;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'The live link between the %ws extension in a kernel and its notebook; disk edits merged into open tabs; cell links.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ISettingRegistry, IRouter],
  activate: async (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    registry: ISettingRegistry | null,
    router: IRouter | null
  ) => {
    if (router) {
      followRoutedFragments(router, tracker);
    }
    const defaults: ISettings = { mode: 'review', userRuns: 'ask' };
    let pollInterval = 1000;
    if (registry) {
      try {
        const settings = await registry.load(PLUGIN_ID);
        defaults.userRuns = settings.get('userKernelRuns').composite === 'off' ? 'off' : 'ask';
        pollInterval = Math.max(250, Number(settings.get('diskPollInterval').composite) || 1000);
      } catch {
        // the defaults above
      }
    }
    // wrapped as each notebook widget is made: a link's click calls setFragment right after that
    app.docRegistry.getWidgetFactory('Notebook')?.widgetCreated.connect((_, widget) => {
      followCellFragments(widget as NotebookPanel);
    });
    const channels = new Map<NotebookPanel, LiveChannel>();
    const syncs = new Map<NotebookPanel, DiskSync>();

    tracker.widgetAdded.connect((_, panel) => {
      followCellFragments(panel);
      void panel.context.ready.then(() => {
        if (panel.isDisposed) {
          return;
        }
        const channel = new LiveChannel(panel, defaults);
        channels.set(panel, channel);
        syncs.set(panel, new DiskSync(channel.state, app.serviceManager.contents, pollInterval));
        panel.toolbar.insertItem(10, 'wsLiveMode', modeButton(channel));
        panel.disposed.connect(() => {
          channels.delete(panel);
          syncs.delete(panel);
        });
      });
    });

    app.commands.addCommand(UNDO_COMMAND, {
      label: 'Undo the last applied agent proposal',
      execute: () => {
        const panel = tracker.currentWidget;
        const channel = panel ? channels.get(panel) : undefined;
        if (channel && channel.proposals.canUndo) {
          channel.proposals.undo();
          return;
        }
        return app.commands.execute('editmenu:undo');
      }
    });
    // more specific than JupyterLab's own Ctrl+Z (which undoes typing in the active cell): only
    // while the newest undo step of the notebook is an applied proposal, in command mode
    app.commands.addKeyBinding({
      command: UNDO_COMMAND,
      keys: ['Accel Z'],
      selector: '.jp-Notebook.jp-mod-commandMode.ws-live-undo :focus'
    });

    // the test and measurement harness reads timings through this (only when the page asks for it)
    if (PageConfig.getOption('exposeAppInBrowser') === 'true') {
      (window as unknown as { wsJupyterLive: unknown }).wsJupyterLive = {
        channel: (path: string) => [...channels.values()].find(c => c.panel.context.path === path),
        sync: (path: string) => [...syncs.values()].find(s => s.panel.context.path === path)
      };
    }
  }
};

export default plugin;
