/**
 * Mirroring VS Code's `citelsp.*` settings to the server's `citelsp` section.
 *
 * Only settings the user set are sent, so that the server's own defaults and its `CITELSP_*`
 * environment apply to the rest (a default `offline: false` sent by the client would override
 * `CITELSP_OFFLINE=1`). Machine-scoped settings (base URLs, API keys) are taken from the user
 * settings only, never from a workspace a cloned repository brings along.
 *
 * No `vscode` import: the unit tests run under plain Node.
 */

export const SECTION = 'citelsp';

/** Settings under these prefixes are the extension's own; the server never sees them. */
export const CLIENT_ONLY = ['server.', 'trace.'];

export interface SettingSpec {
  /** Key inside the section, e.g. `minPriority` or `resolvers.crossref.baseUrl`. */
  key: string;
  scope?: string;
}

/** What `WorkspaceConfiguration.inspect` reports for one key. */
export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** The server's settings, from the extension's `contributes.configuration.properties`. */
export function serverSettingSpecs(properties: Record<string, { scope?: string }>): SettingSpec[] {
  const prefix = `${SECTION}.`;
  return Object.entries(properties)
    .filter(([name]) => name.startsWith(prefix))
    .map(([name, schema]) => ({ key: name.slice(prefix.length), scope: schema.scope }))
    .filter(({ key }) => !CLIENT_ONLY.some((own) => key.startsWith(own)));
}

/** The value that applies, or undefined when the user set none. */
export function explicitValue(spec: SettingSpec, seen: Inspected | undefined): unknown {
  if (seen === undefined) {
    return undefined;
  }
  if (spec.scope === 'machine') {
    return seen.globalValue;
  }
  return [seen.workspaceFolderValue, seen.workspaceValue, seen.globalValue]
    .find((value) => value !== undefined);
}

/** `{a: {b: value}}` for key `a.b`, merged into `target`. */
function setNested(target: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) {
      node[part] = {};
    }
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]] = value;
}

/** The `citelsp` section to send: explicitly set values, nested by their dotted keys. */
export function explicitSettings(
  specs: SettingSpec[],
  inspect: (key: string) => Inspected | undefined,
): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const spec of specs) {
    const value = explicitValue(spec, inspect(spec.key));
    if (value !== undefined && value !== null) {
      setNested(settings, spec.key, JSON.parse(JSON.stringify(value)));
    }
  }
  return settings;
}

/** Whether a configuration change means the server process must be started again. */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return affects(`${SECTION}.server`);
}
