/**
 * Finding the citelsp server without configuration: the `citelsp.server.path` setting, else
 * `citelsp` on PATH, else the Python extension's interpreter with `-m citelsp`. Each candidate
 * is asked for `--version` before the language client starts it, so that a missing or broken
 * server gives one clear notification instead of a client that dies while starting.
 *
 * No `vscode` import: the unit tests run under plain Node.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import * as path from 'node:path';

export type ServerSource = 'setting' | 'path' | 'python';

/** A way to start the server: `command ...args` speaks LSP on stdio. */
export interface ServerCommand {
  command: string;
  args: string[];
  source: ServerSource;
}

export interface FoundServer extends ServerCommand {
  version: string;
}

export interface Attempt {
  candidate: ServerCommand;
  error: string;
}

export interface Discovery {
  found?: FoundServer;
  attempts: Attempt[];
}

/** Answers the candidate's version, or rejects with a one-line reason. */
export type Probe = (candidate: ServerCommand) => Promise<string>;

/**
 * The commands to try, in order. A configured path is the only candidate: falling back
 * silently would hide a typo in the setting.
 */
export function candidates(
  setting: { path: string; args: string[] },
  onPath: string | undefined,
  python: string[] | undefined,
): ServerCommand[] {
  const configured = setting.path.trim();
  if (configured) {
    return [{ command: configured, args: [...setting.args], source: 'setting' }];
  }
  const found: ServerCommand[] = [];
  if (onPath) {
    found.push({ command: onPath, args: [], source: 'path' });
  }
  if (python && python.length > 0) {
    found.push({ command: python[0], args: [...python.slice(1), '-m', 'citelsp'], source: 'python' });
  }
  return found;
}

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The first `name` on `searchPath` (PATH's value) that is an executable file. */
export function findOnPath(
  name: string,
  searchPath: string | undefined,
  platform: NodeJS.Platform = process.platform,
  isExecutable: (file: string) => boolean = isExecutableFile,
): string | undefined {
  const separator = platform === 'win32' ? ';' : ':';
  const suffixes = platform === 'win32' ? ['.exe', '.cmd', '.bat', ''] : [''];
  for (const folder of (searchPath ?? '').split(separator)) {
    if (!folder) {
      continue;
    }
    for (const suffix of suffixes) {
      const file = path.join(folder, name + suffix);
      if (isExecutable(file)) {
        return file;
      }
    }
  }
  return undefined;
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

/** Tries each candidate in turn; the first that answers its version wins. */
export async function discover(list: ServerCommand[], probe: Probe = runVersion): Promise<Discovery> {
  const attempts: Attempt[] = [];
  for (const candidate of list) {
    try {
      return { found: { ...candidate, version: await probe(candidate) }, attempts };
    } catch (error) {
      attempts.push({ candidate, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return { attempts };
}

/** One line per failed attempt, for the output channel. */
export function describeAttempts(discovery: Discovery): string[] {
  return discovery.attempts.map(({ candidate, error }) =>
    `${candidate.source}: ${[candidate.command, ...candidate.args].join(' ')}: ${error}`);
}
