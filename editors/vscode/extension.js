'use strict';
/**
 * citelsp for VS Code: starts the `citelsp` language server on stdio and keeps the `citelsp`
 * settings in sync with it. The server advertises its commands (citelsp.reverify, ...), and the
 * language client registers them; this file registers none itself, or the ids would clash.
 */

const vscode = require('vscode');
const { LanguageClient, DidChangeConfigurationNotification } = require('vscode-languageclient/node');

const SECTION = 'citelsp';
/** Settings the extension itself reads; the server never sees them. */
const CLIENT_ONLY = ['server.', 'trace.'];

const DOCUMENTS = [
  { scheme: 'file', language: 'markdown' },
  { scheme: 'file', language: 'latex' },
  { scheme: 'file', language: 'tex' },
  { scheme: 'file', language: 'bibtex' },
  { scheme: 'file', language: 'json' },
  // Without a LaTeX extension VS Code opens .bib files as plain text.
  { scheme: 'file', pattern: '**/*.bib' },
];

let client;
let serverKeys = [];

/**
 * The `citelsp` settings the user set in some scope, with their effective values.
 *
 * Defaults stay out so that the server's own defaults and the CITELSP_* environment apply:
 * a default `offline: false` sent by the client would override CITELSP_OFFLINE=1.
 */
function explicitSettings(scope) {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  const settings = {};
  for (const key of serverKeys) {
    const seen = config.inspect(key);
    const set = seen !== undefined && [seen.globalValue, seen.workspaceValue, seen.workspaceFolderValue]
      .some((value) => value !== undefined);
    const value = config.get(key);
    if (set && value !== undefined && value !== null) {
      settings[key] = JSON.parse(JSON.stringify(value));
    }
  }
  return settings;
}

function scopeOf(item) {
  return item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
}

function createClient() {
  let instance;
  const config = vscode.workspace.getConfiguration(SECTION);
  const serverOptions = {
    command: config.get('server.path') || 'citelsp',
    args: config.get('server.args') || [],
  };
  const clientOptions = {
    documentSelector: DOCUMENTS,
    outputChannelName: 'citelsp',
    initializationOptions: explicitSettings(undefined),
    synchronize: { configurationSection: SECTION },
    middleware: {
      workspace: {
        configuration: async (params, token, next) => {
          const answers = await next(params, token);
          if (!Array.isArray(answers)) {
            return answers;
          }
          return params.items.map((item, i) =>
            item.section === SECTION ? explicitSettings(scopeOf(item)) : answers[i]);
        },
        didChangeConfiguration: () => instance.sendNotification(
          DidChangeConfigurationNotification.type,
          { settings: { [SECTION]: explicitSettings(undefined) } },
        ),
      },
    },
  };
  instance = new LanguageClient('citelsp', 'citelsp', serverOptions, clientOptions);
  return instance;
}

async function startClient() {
  client = createClient();
  try {
    await client.start();
  } catch (error) {
    const command = vscode.workspace.getConfiguration(SECTION).get('server.path') || 'citelsp';
    vscode.window.showErrorMessage(
      `citelsp: could not start '${command}' (${error && error.message ? error.message : error}). ` +
      'Install it (pip install citelsp) or set "citelsp.server.path".');
  }
}

async function restartClient() {
  if (client) {
    const old = client;
    client = undefined;
    await old.stop().catch(() => undefined);
  }
  await startClient();
}

async function activate(context) {
  const properties = context.extension.packageJSON.contributes.configuration.properties;
  serverKeys = Object.keys(properties)
    .map((name) => name.slice(SECTION.length + 1))
    .filter((key) => !CLIENT_ONLY.some((prefix) => key.startsWith(prefix)));

  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration((event) => {
    if (event.affectsConfiguration(`${SECTION}.server`)) {
      restartClient();
    }
  }));
  await startClient();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
