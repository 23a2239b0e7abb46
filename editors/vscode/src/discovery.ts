/**
 * Finding the citelsp server without configuration. The places, in order: the
 * `citelsp.server.path` setting (alone, when set); `citelsp` on PATH; the interpreter chosen in
 * the Python extension with `-m citelsp`; the workspace's `.venv`, `venv` and `env`
 * environments; pipx's bin folder; pip's user bin folders. A place that holds a server is asked
 * for `--version` before the language client starts it, so a missing or broken server gives
 * one clear notification instead of a client that dies while starting; every place looked at
 * is logged with why it did not answer.
 *
 * The extension host's PATH is the one of the process that started the editor (a desktop
 * launcher often gives a login shell's PATH without `~/.local/bin` or an activated venv),
 * which is why the other places are looked at too.
 *
 * No `vscode` import: the unit tests run under plain Node.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';

export type ServerSource = 'setting' | 'path' | 'python' | 'workspace' | 'pipx' | 'user';

/** A way to start the server: `command ...args` speaks LSP on stdio. */
export interface ServerCommand {
  command: string;
  args: string[];
  source: ServerSource;
}

export interface FoundServer extends ServerCommand {
  version: string;
}

/** A place looked at: a command to ask, or why there is none there. */
export interface Place {
  source: ServerSource;
  /** Where, in words: "PATH", "workspace /ws/.venv", "pipx (~/.local/bin)". */
  where: string;
  candidate?: ServerCommand;
  missing?: string;
}

export interface Attempt {
  place: Place;
  error: string;
}

export interface Discovery {
  found?: FoundServer;
  /** Every place looked at before the server was found (all of them when it was not). */
  attempts: Attempt[];
}

/** What discovery may look at; the extension passes the real machine, tests a fake one. */
export interface Machine {
  platform: NodeJS.Platform;
  home: string;
  env: Record<string, string | undefined>;
  workspaceFolders: string[];
  /** Workspace Trust: an untrusted workspace's programs are never run. */
  workspaceTrusted: boolean;
  isExecutable(file: string): boolean;
  isDirectory(folder: string): boolean;
  /** Names in a folder, [] when it cannot be read. */
  list(folder: string): string[];
}

/** The Python extension: not installed, installed with no interpreter, or its command. */
export type PythonChoice = { installed: false } | { installed: true; command?: string[] };

/** Answers the candidate's version, or rejects with a one-line reason. */
export type Probe = (candidate: ServerCommand) => Promise<string>;

export const WORKSPACE_ENVIRONMENTS = ['.venv', 'venv', 'env'];

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** This machine, for the extension. */
export function realMachine(workspaceFolders: string[], workspaceTrusted: boolean, home: string): Machine {
  return {
    platform: process.platform,
    home,
    env: process.env,
    workspaceFolders,
    workspaceTrusted,
    isExecutable: isExecutableFile,
    isDirectory: (folder) => {
      try {
        return statSync(folder).isDirectory();
      } catch {
        return false;
      }
    },
    list: (folder) => {
      try {
        return readdirSync(folder);
      } catch {
        return [];
      }
    },
  };
}

/** The first `name` on `searchPath` (PATH's value) that is an executable file. */
export function findOnPath(
  name: string,
  searchPath: string | undefined,
  platform: NodeJS.Platform = process.platform,
  isExecutable: (file: string) => boolean = isExecutableFile,
): string | undefined {
  const separator = platform === 'win32' ? ';' : ':';
  for (const folder of (searchPath ?? '').split(separator)) {
    if (folder) {
      const file = executableIn(folder, name, platform, isExecutable);
      if (file) {
        return file;
      }
    }
  }
  return undefined;
}

function executableIn(
  folder: string,
  name: string,
  platform: NodeJS.Platform,
  isExecutable: (file: string) => boolean,
): string | undefined {
  const join = platform === 'win32' ? path.win32.join : path.posix.join;
  const suffixes = platform === 'win32' ? ['.exe', '.cmd', '.bat', ''] : [''];
  for (const suffix of suffixes) {
    const file = join(folder, name + suffix);
    if (isExecutable(file)) {
      return file;
    }
  }
  return undefined;
}

/** pipx's bin folder, then pip's `--user` bin folders (Linux, macOS framework builds, Windows). */
function userBinFolders(machine: Machine): { source: ServerSource; folder: string }[] {
  const { platform, home, env } = machine;
  const join = platform === 'win32' ? path.win32.join : path.posix.join;
  const local = join(home, '.local', 'bin');
  const folders: { source: ServerSource; folder: string }[] = [
    { source: 'pipx', folder: env.PIPX_BIN_DIR || local },
  ];
  if (env.PYTHONUSERBASE) {
    folders.push({ source: 'user', folder: join(env.PYTHONUSERBASE, platform === 'win32' ? 'Scripts' : 'bin') });
  }
  if (platform === 'darwin') {
    const base = join(home, 'Library', 'Python');
    for (const version of machine.list(base).filter((v) => /^\d+\.\d+$/.test(v)).sort().reverse()) {
      folders.push({ source: 'user', folder: join(base, version, 'bin') });
    }
  } else if (platform === 'win32') {
    const base = join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'Python');
    for (const version of machine.list(base).filter((v) => /^Python3\d+$/.test(v)).sort().reverse()) {
      folders.push({ source: 'user', folder: join(base, version, 'Scripts') });
    }
  }
  folders.push({ source: 'user', folder: local });
  const seen = new Set<string>();
  return folders.filter(({ folder }) => {
    const fresh = !seen.has(folder);
    seen.add(folder);
    return fresh;
  });
}

/** The workspace's virtual environments: their `citelsp`, else their Python with `-m citelsp`. */
function workspacePlaces(machine: Machine): Place[] {
  const { platform } = machine;
  const join = platform === 'win32' ? path.win32.join : path.posix.join;
  const found: Place[] = [];
  if (!machine.workspaceTrusted && machine.workspaceFolders.length > 0) {
    return [{ source: 'workspace', where: 'workspace environments',
      missing: 'not looked at: the workspace is not trusted' }];
  }
  for (const root of machine.workspaceFolders) {
    const present = WORKSPACE_ENVIRONMENTS.map((name) => join(root, name))
      .filter((folder) => machine.isDirectory(folder));
    if (present.length === 0) {
      found.push({ source: 'workspace', where: `workspace ${root}`,
        missing: `no ${WORKSPACE_ENVIRONMENTS.join(', ')} folder` });
    }
    for (const environment of present) {
      const bin = join(environment, platform === 'win32' ? 'Scripts' : 'bin');
      const where = `workspace ${environment}`;
      const server = executableIn(bin, 'citelsp', platform, machine.isExecutable);
      const python = executableIn(bin, 'python', platform, machine.isExecutable);
      if (server) {
        found.push({ source: 'workspace', where, candidate: { command: server, args: [], source: 'workspace' } });
      } else if (python) {
        found.push({ source: 'workspace', where,
          candidate: { command: python, args: ['-m', 'citelsp'], source: 'workspace' } });
      } else {
        found.push({ source: 'workspace', where, missing: `no citelsp or python in ${bin}` });
      }
    }
  }
  return found;
}

/**
 * The places to look at, in order. A configured path is the only one: falling back silently
 * would hide a typo in the setting.
 */
export function places(
  setting: { path: string; args: string[] },
  machine: Machine,
  python: PythonChoice,
): Place[] {
  const configured = setting.path.trim();
  if (configured) {
    return [{ source: 'setting', where: 'citelsp.server.path',
      candidate: { command: configured, args: [...setting.args], source: 'setting' } }];
  }
  const found: Place[] = [{ source: 'setting', where: 'citelsp.server.path', missing: 'not set' }];

  const searchPath = machine.env.PATH ?? machine.env.Path;
  const onPath = findOnPath('citelsp', searchPath, machine.platform, machine.isExecutable);
  const folders = (searchPath ?? '').split(machine.platform === 'win32' ? ';' : ':').filter(Boolean);
  found.push(onPath
    ? { source: 'path', where: 'PATH', candidate: { command: onPath, args: [], source: 'path' } }
    : { source: 'path', where: 'PATH', missing: `no citelsp in its ${folders.length} folders ` +
        `(the editor's PATH comes from the program that started it): ${searchPath ?? ''}` });

  if (!python.installed) {
    found.push({ source: 'python', where: 'Python extension', missing: 'not installed (ms-python.python)' });
  } else if (!python.command || python.command.length === 0) {
    found.push({ source: 'python', where: 'Python extension', missing: 'no interpreter chosen' });
  } else {
    found.push({ source: 'python', where: 'Python extension interpreter', candidate: {
      command: python.command[0], args: [...python.command.slice(1), '-m', 'citelsp'], source: 'python' } });
  }

  found.push(...workspacePlaces(machine));

  for (const { source, folder } of userBinFolders(machine)) {
    const where = source === 'pipx' ? `pipx (${folder})` : `pip --user (${folder})`;
    const server = executableIn(folder, 'citelsp', machine.platform, machine.isExecutable);
    found.push(server
      ? { source, where, candidate: { command: server, args: [], source } }
      : { source, where, missing: 'no citelsp there' });
  }
  return found;
}

/** `citelsp 0.1.0` → `0.1.0`; anything else is not our server. */
export function parseVersion(output: string): string | undefined {
  const match = /^citelsp\s+(\S+)/m.exec(output);
  return match ? match[1] : undefined;
}

/** Runs `candidate --version` with a time limit. */
export function runVersion(candidate: ServerCommand, timeoutMs = 15000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(candidate.command, [...candidate.args, '--version'], { timeout: timeoutMs },
      (error, stdout, stderr) => {
        const version = parseVersion(`${stdout}`);
        if (version) {
          resolve(version);
        } else if (error) {
          const detail = `${stderr}`.trim().split('\n').pop();
          reject(new Error(detail || error.message));
        } else {
          reject(new Error(`'--version' did not print 'citelsp <version>'`));
        }
      });
  });
}

/** Asks each place's command in turn; the first that answers its version wins. */
export async function discover(list: Place[], probe: Probe = runVersion): Promise<Discovery> {
  const attempts: Attempt[] = [];
  for (const place of list) {
    if (!place.candidate) {
      attempts.push({ place, error: place.missing ?? 'nothing there' });
      continue;
    }
    try {
      return { found: { ...place.candidate, version: await probe(place.candidate) }, attempts };
    } catch (error) {
      attempts.push({ place, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return { attempts };
}

/** One line per place looked at, for the output channel. */
export function describeAttempts(discovery: Discovery): string[] {
  return discovery.attempts.map(({ place, error }) => {
    const command = place.candidate ? ` ${[place.candidate.command, ...place.candidate.args].join(' ')}:` : '';
    return `${place.where}:${command} ${error}`;
  });
}

/** How to install the server today (it is not on PyPI yet, so `pipx install citelsp` fails). */
export const INSTALL_HINT =
  'citelsp is not on PyPI yet: install it from a checkout of its repository with ' +
  "'pipx install /path/to/citelsp' (or 'pip install /path/to/citelsp' into the Python " +
  'environment you choose here)';

/** The notification when no place answered. */
export function missingMessage(discovery: Discovery): string {
  const configured = discovery.attempts.find((a) => a.place.source === 'setting' && a.place.candidate);
  if (configured?.place.candidate) {
    return `citelsp: "${configured.place.candidate.command}" (citelsp.server.path) did not start ` +
      `the citelsp server: ${configured.error}`;
  }
  return `citelsp: the citelsp language server was not found in the ${discovery.attempts.length} ` +
    `places looked at (listed in the citelsp output channel). ${INSTALL_HINT}.`;
}
