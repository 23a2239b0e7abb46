/**
 * citelsp for VS Code: finds the citelsp server, starts it on stdio with vscode-languageclient,
 * mirrors the `citelsp.*` settings to it, and shows verification progress, the P0/P1 counts
 * and the server's `citelsp/status` notice in the status bar.
 *
 * The server advertises its commands (citelsp.reverify, citelsp.showChecklist, ...) and the
 * language client registers them while the server runs; the extension registers none of those
 * ids itself (that would fail with "command already exists"), it only adds feedback to their
 * results through the client's middleware and hides them from the palette while no server runs.
 */
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  State,
  StaticFeature,
} from 'vscode-languageclient/node';

import * as os from 'node:os';

import {
  describeAttempts, discover, Discovery, FoundServer, missingMessage, places, PythonChoice, realMachine,
} from './discovery';
import { chosenInterpreter, onInterpreterChange, pythonExtensionInstalled } from './python';
import { DOCUMENTS } from './documents';
import { explicitSettings, needsRestart, SECTION, serverSettingSpecs, SettingSpec } from './settings';
import { Level, StatusModel } from './status';


const RUNNING_CONTEXT = 'citelsp.serverRunning';
/** The server's one-line state, e.g. "offline — 4 references not checked" ("" to clear). */
const STATUS_NOTIFICATION = 'citelsp/status';

function level(severity: vscode.DiagnosticSeverity): Level {
  if (severity === vscode.DiagnosticSeverity.Error) {
    return 'error';
  }
  return severity === vscode.DiagnosticSeverity.Warning ? 'warning' : 'other';
}

class Controller {
  private client: LanguageClient | undefined;
  private server: FoundServer | undefined;
  private queue: Promise<void> = Promise.resolve();
  private readonly model = new StatusModel();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
    private readonly status: vscode.StatusBarItem,
    private readonly specs: SettingSpec[],
  ) {}

  /** Start, stop and restart run one after the other, never interleaved. */
  private enqueue(step: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(step, step);
    return this.queue;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.startNow());
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.stopNow();
      await this.startNow();
    });
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.stopNow());
  }

  /** Whether choosing another Python interpreter should start the server again. */
  dependsOnInterpreter(): boolean {
    return this.server === undefined || this.server.source === 'python';
  }

  private settings(scope: vscode.Uri | undefined): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration(SECTION, scope);
    return explicitSettings(this.specs, (key) => config.inspect(key));
  }

  private render(): void {
    const view = this.model.view();
    this.status.text = view.text;
    this.status.tooltip = view.tooltip;
    this.status.command = view.command;
    this.status.show();
  }

  private setRunning(running: boolean): void {
    this.model.setRunning(running);
    if (!running) {
      this.model.clearFindings();
    }
    void vscode.commands.executeCommand('setContext', RUNNING_CONTEXT, running);
    this.render();
  }

  private async findServer(): Promise<Discovery> {
    const config = vscode.workspace.getConfiguration(SECTION);
    const folders = (vscode.workspace.workspaceFolders ?? [])
      .filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
    const python: PythonChoice = pythonExtensionInstalled()
      ? { installed: true, command: await chosenInterpreter(vscode.workspace.workspaceFolders?.[0]?.uri) }
      : { installed: false };
    const list = places(
      { path: config.get<string>('server.path') ?? '', args: config.get<string[]>('server.args') ?? [] },
      realMachine(folders, vscode.workspace.isTrusted, os.homedir()),
      python,
    );
    return discover(list);
  }

  private async startNow(): Promise<void> {
    this.render();
    const discovery = await this.findServer();
    this.output.appendLine(`[discovery] looking for the citelsp server (${new Date().toISOString()})`);
    for (const line of describeAttempts(discovery)) {
      this.output.appendLine(`[discovery] ${line}`);
    }
    if (!discovery.found) {
      this.server = undefined;
      this.setRunning(false);
      void this.notifyMissing(discovery);
      return;
    }
    const server = discovery.found;
    this.server = server;
    this.output.appendLine(`[discovery] found citelsp ${server.version} (${server.source}): ` +
      [server.command, ...server.args].join(' '));
    const client = new LanguageClient('citelsp', 'citelsp',
      { command: server.command, args: server.args }, this.clientOptions());
    client.registerFeature(PROMPTS_FOR_IDENTIFIER);
    client.onDidChangeState((event) => this.setRunning(event.newState === State.Running));
    client.onNotification(STATUS_NOTIFICATION, (params: { message?: string }) => {
      this.model.setNotice(params?.message);
      this.render();
    });
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.output.appendLine(`[client] could not start: ${reason}`);
      void vscode.window.showErrorMessage(
        `citelsp: the server (${server.command}) stopped while starting: ${reason}`, 'Show log')
        .then((choice) => choice && this.output.show(true));
    }
  }

  private async stopNow(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      await client.stop().catch((error: unknown) => this.output.appendLine(`[client] stop: ${error}`));
    }
    this.setRunning(false);
  }

  private async notifyMissing(discovery: Discovery): Promise<void> {
    const choice = await vscode.window.showErrorMessage(missingMessage(discovery),
      'Install…', 'Choose interpreter…', 'Show what was tried');
    if (choice === 'Show what was tried') {
      this.output.show(true);
    } else if (choice === 'Install…') {
      await vscode.commands.executeCommand('markdown.showPreview', await this.readme());
    } else if (choice === 'Choose interpreter…') {
      if (pythonExtensionInstalled()) {
        await vscode.commands.executeCommand('python.setInterpreter');
      } else {
        await vscode.commands.executeCommand('workbench.action.openSettings', 'citelsp.server.path');
      }
    }
  }

  /** The install instructions shipped with the extension (vsce lower-cases the name). */
  private async readme(): Promise<vscode.Uri> {
    for (const name of ['README.md', 'readme.md']) {
      const uri = vscode.Uri.joinPath(this.context.extensionUri, name);
      try {
        await vscode.workspace.fs.stat(uri);
        return uri;
      } catch {
        continue;
      }
    }
    return vscode.Uri.joinPath(this.context.extensionUri, 'README.md');
  }

  private clientOptions(): LanguageClientOptions {
    return {
      documentSelector: DOCUMENTS,
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: this.settings(undefined),
      synchronize: { configurationSection: SECTION },
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) {
              return answers;
            }
            return params.items.map((item, i) => item.section === SECTION
              ? this.settings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
              : answers[i]);
          },
          didChangeConfiguration: async () => {
            await this.client?.sendNotification(DidChangeConfigurationNotification.type,
              { settings: { [SECTION]: this.settings(undefined) } });
          },
        },
        handleDiagnostics: (uri, diagnostics, next) => {
          this.model.setFindings(uri.toString(), diagnostics.map((d) => ({
            level: level(d.severity), message: d.message })));
          this.render();
          next(uri, diagnostics);
        },
        handleWorkDoneProgress: (token, params, next) => {
          if (params.kind === 'end') {
            this.model.endProgress();
          } else {
            this.model.setProgress(params.message);
          }
          this.render();
          next(token, params);
        },
        executeCommand: async (command, args, next) => {
          if (command === CREATE_ENTRY && args.length === 2) {
            const identifier = await askIdentifier(String(args[1]));
            if (!identifier) {
              return undefined;
            }
            args = [...args, identifier];
          }
          const result = await next(command, args);
          void this.acknowledge(command, result);
          return result;
        },
      },
    };
  }

  /** A short confirmation of what a palette command did. */
  private async acknowledge(command: string, result: unknown): Promise<void> {
    const answer = (result ?? {}) as Record<string, unknown>;
    if (command === 'citelsp.reverify' && typeof answer.queued === 'number') {
      void vscode.window.showInformationMessage(`citelsp: verifying ${answer.queued} reference(s) again.`);
    } else if (command === 'citelsp.clearCache' && answer.cleared) {
      void vscode.window.showInformationMessage('citelsp: lookup cache cleared; verifying again.');
    } else if (command === 'citelsp.exportReport' && typeof answer.uri === 'string') {
      const report = vscode.Uri.parse(answer.uri);
      const choice = await vscode.window.showInformationMessage(
        `citelsp: report written to ${vscode.workspace.asRelativePath(report)}.`, 'Open');
      if (choice === 'Open') {
        await vscode.window.showTextDocument(report);
      }
    }
  }
}

const CREATE_ENTRY = 'citelsp.createEntry';

/**
 * Tells the server this client asks the writer for a DOI or arXiv id when its "create the
 * entry" action leaves it out (the server offers that action only to clients that can).
 */
const PROMPTS_FOR_IDENTIFIER: StaticFeature = {
  fillClientCapabilities(capabilities) {
    capabilities.experimental = { ...(capabilities.experimental ?? {}), citelspPromptsForIdentifier: true };
  },
  initialize() {},
  getState: () => ({ kind: 'static' }),
  clear() {},
};

function askIdentifier(key: string): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title: `citelsp: create an entry for '${key}'`,
    prompt: 'The DOI or arXiv id of the work (it is looked up and added to the bibliography)',
    placeHolder: '10.1038/nature14539 or 1706.03762',
    ignoreFocusOut: true,
    validateInput: (value) => value.trim() ? undefined : 'A DOI or an arXiv id',
  });
}

let controller: Controller | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('citelsp');
  const status = vscode.window.createStatusBarItem('citelsp.status', vscode.StatusBarAlignment.Left, 10);
  status.name = 'citelsp';
  const specs = serverSettingSpecs(context.extension.packageJSON.contributes.configuration.properties);
  const current = new Controller(context, output, status, specs);
  controller = current;
  context.subscriptions.push(
    output,
    status,
    vscode.commands.registerCommand('citelsp.restartServer', () => current.restart()),
    vscode.commands.registerCommand('citelsp.showOutput', () => output.show(true)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (needsRestart((section) => event.affectsConfiguration(section))) {
        void current.restart();
      }
    }),
  );
  const interpreterWatch = await onInterpreterChange(() => {
    if (current.dependsOnInterpreter()) {
      void current.restart();
    }
  });
  if (interpreterWatch) {
    context.subscriptions.push(interpreterWatch);
  }
  await current.start();
}

export function deactivate(): Promise<void> | undefined {
  return controller?.stop();
}
